-- The totals are applied once per statement, with the shard rows locked in
-- ascending order, instead of once per record.
--
-- Why: the per-record trigger locked a shard row of `store_totals` in the
-- order the statement met its records. Two sweepers, each removing a batch
-- of expired records in one DELETE, could then each hold a shard the other
-- needed next, and PostgreSQL aborted one of them ("deadlock detected").
-- When every statement locks the shards it touches in the same order, no
-- two statements can wait on each other in a cycle.
--
-- `store_kind_totals` rows need no order of their own: a statement locks
-- the `store_totals` row of a shard before it touches any kind row of that
-- shard, and holds it until it commits, so that row guards them.
--
-- Transaction-wide, the rule is "one statement changes records": a
-- transaction that changed records in two statements could still lock
-- shards out of order. store-pg's transactions change records in one.

-- This migration runs in one transaction, and DROP TRIGGER takes the
-- table's exclusive lock, so no write falls between the two triggers.
DROP TRIGGER store_objects_count ON store_objects;
DROP FUNCTION store_count();

-- What one statement adds to one shard and kind.
CREATE TYPE store_delta AS (
    shard       int,
    kind        text,
    objects     bigint,
    pool_bytes  bigint,
    pics_bytes  bigint
);

-- Adds `deltas` to the totals. Every caller passes all of its statement's
-- changes at once, so that the shard rows are locked in one ordered pass.
CREATE FUNCTION store_apply_totals(deltas store_delta[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(deltas) = 0 THEN
        RETURN;
    END IF;
    -- ORDER BY is applied before the rows are locked, so they are locked
    -- in ascending shard order.
    PERFORM 1 FROM store_totals
      WHERE shard IN (SELECT d.shard FROM unnest(deltas) d)
      ORDER BY shard
        FOR UPDATE;
    UPDATE store_totals t
       SET objects = t.objects + d.objects,
           pool_bytes = t.pool_bytes + d.pool_bytes,
           pics_bytes = t.pics_bytes + d.pics_bytes
      FROM (SELECT shard, sum(objects) AS objects, sum(pool_bytes) AS pool_bytes,
                   sum(pics_bytes) AS pics_bytes
              FROM unnest(deltas) GROUP BY shard) d
     WHERE t.shard = d.shard;
    INSERT INTO store_kind_totals (shard, kind, objects)
    SELECT shard, kind, sum(objects) FROM unnest(deltas) GROUP BY shard, kind
    ON CONFLICT (shard, kind) DO UPDATE
       SET objects = store_kind_totals.objects + EXCLUDED.objects;
END $$;

-- One trigger function for the three events. PostgreSQL allows transition
-- tables only on single-event triggers, so there are three triggers; each
-- names only the tables its event has, and PL/pgSQL plans a query only
-- when it first runs, so the branches of the other events are never
-- planned against a table that does not exist.
CREATE FUNCTION store_count_statement() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    deltas store_delta[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        deltas := ARRAY(
            SELECT ROW(abs(hashtext(key)) % 16, body->>'kind', 1,
                       pool_bytes, pics_bytes)::store_delta
              FROM new_rows);
    ELSIF TG_OP = 'DELETE' THEN
        deltas := ARRAY(
            SELECT ROW(abs(hashtext(key)) % 16, body->>'kind', -1,
                       -pool_bytes, -pics_bytes)::store_delta
              FROM old_rows);
    ELSE
        deltas := ARRAY(
            SELECT ROW(abs(hashtext(key)) % 16, body->>'kind', 1,
                       pool_bytes, pics_bytes)::store_delta
              FROM new_rows
            UNION ALL
            SELECT ROW(abs(hashtext(key)) % 16, body->>'kind', -1,
                       -pool_bytes, -pics_bytes)::store_delta
              FROM old_rows);
    END IF;
    PERFORM store_apply_totals(deltas);
    RETURN NULL;
END $$;

CREATE TRIGGER store_objects_count_insert
    AFTER INSERT ON store_objects REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION store_count_statement();
CREATE TRIGGER store_objects_count_update
    AFTER UPDATE ON store_objects
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION store_count_statement();
CREATE TRIGGER store_objects_count_delete
    AFTER DELETE ON store_objects REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION store_count_statement();
