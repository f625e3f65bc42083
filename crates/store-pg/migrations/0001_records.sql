-- storesrv schema, version 1: records and their indexes, pool totals kept
-- by trigger in the same transaction as every record change, in-flight
-- pool reservations per process, and the shared rate limiter.

-- One row per object. `body` is the record as JSON (store-core's serde
-- form); the other columns are what the indexes and the totals need.
CREATE TABLE store_objects (
    -- "C": byte order, the order sled and the conformance suite expect.
    key         text COLLATE "C" PRIMARY KEY,
    body        jsonb NOT NULL,
    -- Milliseconds since the epoch; NULL for retained objects, which
    -- never expire and are never evicted.
    expires_at  bigint,
    tags        text[] NOT NULL DEFAULT '{}',
    pool_bytes  bigint NOT NULL DEFAULT 0,
    pics_bytes  bigint NOT NULL DEFAULT 0
);

CREATE INDEX store_objects_expiry ON store_objects (expires_at, key)
    WHERE expires_at IS NOT NULL;
CREATE INDEX store_objects_tags ON store_objects USING gin (tags);

-- Sums over the records, in 16 shards so that concurrent writers of
-- different keys rarely wait for the same row.
CREATE TABLE store_totals (
    shard       int PRIMARY KEY CHECK (shard >= 0 AND shard < 16),
    objects     bigint NOT NULL,
    pool_bytes  bigint NOT NULL,
    pics_bytes  bigint NOT NULL
);
INSERT INTO store_totals SELECT s, 0, 0, 0 FROM generate_series(0, 15) s;

CREATE FUNCTION store_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE store_totals
           SET objects = objects - 1,
               pool_bytes = pool_bytes - OLD.pool_bytes,
               pics_bytes = pics_bytes - OLD.pics_bytes
         WHERE shard = abs(hashtext(OLD.key)) % 16;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        UPDATE store_totals
           SET objects = objects + 1,
               pool_bytes = pool_bytes + NEW.pool_bytes,
               pics_bytes = pics_bytes + NEW.pics_bytes
         WHERE shard = abs(hashtext(NEW.key)) % 16;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER store_objects_count
    AFTER INSERT OR UPDATE OR DELETE ON store_objects
    FOR EACH ROW EXECUTE FUNCTION store_count();

-- Bytes reserved by writes in progress, one row per process and pool.
-- A process refreshes `seen_at` every few seconds; the rows of a process
-- that stopped doing so (it was killed) no longer count.
CREATE TABLE store_reservations (
    process  text NOT NULL,
    pool     text NOT NULL,
    bytes    bigint NOT NULL,
    seen_at  timestamptz NOT NULL,
    PRIMARY KEY (process, pool)
);

-- Reserves `bytes` for `process` in `pool` if the records, the live
-- reservations of every process and this one fit under `capacity`.
-- `mine` is what the process has reserved already. Answers 0 when
-- reserved, otherwise the bytes short. Reservations are decided one at a
-- time (a transaction-scoped advisory lock per pool); record writes need
-- no lock, since they only turn reserved bytes into recorded ones.
CREATE FUNCTION store_reserve(p_pool text, p_process text, p_mine bigint,
                              p_bytes bigint, p_capacity bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    recorded bigint;
    others   bigint;
    need     bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(1936028789, hashtext(p_pool));  -- class: store_pg::ADVISORY_CLASS + 3
    SELECT CASE WHEN p_pool = 'store' THEN sum(pool_bytes) ELSE sum(pics_bytes) END
      INTO recorded FROM store_totals;
    SELECT coalesce(sum(bytes), 0) INTO others FROM store_reservations
     WHERE pool = p_pool AND process <> p_process
       AND seen_at > now() - interval '60 seconds';
    need := recorded + others + p_mine + p_bytes;
    IF need > p_capacity THEN
        RETURN need - p_capacity;
    END IF;
    INSERT INTO store_reservations (process, pool, bytes, seen_at)
    VALUES (p_process, p_pool, p_mine + p_bytes, now())
    ON CONFLICT (process, pool)
    DO UPDATE SET bytes = EXCLUDED.bytes, seen_at = now();
    RETURN 0;
END $$;

-- The rate limiter's state: GCRA's theoretical arrival time per client.
CREATE TABLE store_rate (
    client  text PRIMARY KEY,
    tat     bigint NOT NULL
);

-- One step of GCRA, exactly as store_core::ratelimit::gcra_step: answers
-- 0 when the request is admitted, otherwise the whole seconds to wait.
CREATE FUNCTION store_rate_check(p_client text, p_now bigint, p_per_min int)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    step      bigint := 60000 / greatest(p_per_min, 1);
    tolerance bigint := 60000 - step;
    t         bigint;
BEGIN
    INSERT INTO store_rate (client, tat) VALUES (p_client, p_now)
    ON CONFLICT (client) DO NOTHING;
    SELECT tat INTO t FROM store_rate WHERE client = p_client FOR UPDATE;
    t := greatest(t, p_now);
    IF t - p_now > tolerance THEN
        RETURN greatest(1, (t - tolerance - p_now + 999) / 1000);
    END IF;
    UPDATE store_rate SET tat = t + step WHERE client = p_client;
    RETURN 0;
END $$;
