-- storesrv schema, version 12: a rate check commits without waiting for
-- the disk (issue 37, docs/DECISIONS.md "Cluster speed (fourth step: the
-- rate check)").
--
-- Why: with the rate limit on (the default), every request steps its
-- client's row, and the step committed durably: a WAL flush per request,
-- with the row locked until it ended, so one client's requests went at the
-- pace of the disk (about 2,000 GETs a second here, against 20,000 with the
-- limit off). The count is not a write anyone is told of; a database
-- crash that loses the last steps only forgives a client a few requests.
-- synchronous_commit is set off for the caller's transaction only, which
-- is this call alone (store-pg's rate.rs).
CREATE OR REPLACE FUNCTION store_rate_check(p_client text, p_now bigint, p_per_min int)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    step      bigint := 60000 / greatest(p_per_min, 1);
    tolerance bigint := 60000 - step;
    t         bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
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
