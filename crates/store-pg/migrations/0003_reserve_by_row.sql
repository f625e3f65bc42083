-- Reservations decided from the rows, and added to them: a record write
-- now takes its bytes off its process's row in the record's own
-- transaction (store-pg's repo.rs, the *_SETTLED statements), so the row,
-- not the process's count passed in as `p_mine`, is what a decision must
-- read, in the same snapshot as the records' totals: before the record
-- commits, the bytes are in the row and not in the totals; after, the
-- other way round; never in both, never in neither. `p_mine` is kept in
-- the signature and no longer read.
CREATE OR REPLACE FUNCTION store_reserve(p_pool text, p_process text, p_mine bigint,
                                         p_bytes bigint, p_capacity bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    recorded bigint;
    reserved bigint;
    need     bigint;
BEGIN
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
