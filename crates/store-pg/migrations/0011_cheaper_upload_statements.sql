-- storesrv schema, version 11: the two statements of an upload that every
-- other upload queued behind, made cheaper (issue 37, docs/DECISIONS.md
-- "Cluster speed (third step: uploads)").
--
-- 1. A record insert counts itself in the totals with a row trigger
--    instead of migration 5's statement trigger. The statement trigger
--    builds a transition table, an array of deltas and a nested call per
--    statement; measured with pgbench on the upload's own insert, it cut
--    the rate to a quarter of the insert without it, where a row trigger
--    costs half. Every INSERT into store_objects inserts one row
--    (store-pg's repo.rs: INSERT_NEW and INSERT_NEW_SETTLED), so an
--    insert locks one shard of the totals and cannot take part in the
--    lock-order deadlock migration 5 was written against; updates and
--    deletes, which may change many rows in one statement, keep the
--    statement triggers. An INSERT of several rows would need the
--    statement trigger back.
--
-- 2. A reservation commits without waiting for its WAL record to reach
--    the disk (synchronous_commit off, for that transaction only). The
--    reservation holds the pool's advisory lock until it commits, so every
--    reservation of every process waited for the one before it to be
--    flushed. A reservation is not an acknowledged write: the record
--    write that follows it commits durably, and its flush carries the
--    reservation's earlier WAL with it. A database crash in between can
--    lose the reservation, and the row then counts less than the process
--    holds until the process writes its count again: the same transient
--    shortfall as a process silent for over a minute, whose rows stop
--    counting (migration 1).

DROP TRIGGER store_objects_count_insert ON store_objects;

CREATE FUNCTION store_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE store_totals
       SET objects = objects + 1,
           pool_bytes = pool_bytes + NEW.pool_bytes,
           pics_bytes = pics_bytes + NEW.pics_bytes
     WHERE shard = abs(hashtext(NEW.key)) % 16;
    -- Locked after its shard's totals row, as migration 5 orders them.
    INSERT INTO store_kind_totals (shard, kind, objects)
    VALUES (abs(hashtext(NEW.key)) % 16, NEW.body->>'kind', 1)
    ON CONFLICT (shard, kind) DO UPDATE
       SET objects = store_kind_totals.objects + 1;
    RETURN NULL;
END $$;

CREATE TRIGGER store_objects_count_insert_row
    AFTER INSERT ON store_objects
    FOR EACH ROW EXECUTE FUNCTION store_count_insert();

-- Migration 3's decision, unchanged but for its first statement.
CREATE OR REPLACE FUNCTION store_reserve(p_pool text, p_process text, p_mine bigint,
                                         p_bytes bigint, p_capacity bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    recorded bigint;
    reserved bigint;
    need     bigint;
BEGIN
    -- Local to the caller's transaction, which is this call alone.
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM pg_advisory_xact_lock(1936028789, hashtext(p_pool));  -- class: store_pg::ADVISORY_CLASS + 3
    -- One statement, one snapshot for both sums.
    SELECT (SELECT CASE WHEN p_pool = 'store' THEN sum(pool_bytes) ELSE sum(pics_bytes) END
              FROM store_totals),
           (SELECT coalesce(sum(bytes), 0) FROM store_reservations
             WHERE pool = p_pool AND seen_at > now() - interval '60 seconds')
      INTO recorded, reserved;
    need := recorded + reserved + p_bytes;
    IF need > p_capacity THEN
        RETURN need - p_capacity;
    END IF;
    INSERT INTO store_reservations (process, pool, bytes, seen_at)
    VALUES (p_process, p_pool, p_bytes, now())
    ON CONFLICT (process, pool)
    DO UPDATE SET bytes = store_reservations.bytes + EXCLUDED.bytes, seen_at = now();
    RETURN 0;
END $$;
