-- storesrv schema, version 10: what the operator moderates with (issue 36).
--
-- `created_at` (milliseconds) and `terms` (store-core's
-- Object::search_terms: every digest, content type and word of a name the
-- admin finds a record by, and '*' on every row) let GET /admin read a
-- page of records newest first, filtered by one term through the GIN
-- index, without reading the table. The rows written before this version
-- get both from storesrv itself, in the same transaction (schema.rs), as
-- the listings did in version 2.
ALTER TABLE store_objects
    ADD COLUMN created_at bigint NOT NULL DEFAULT 0,
    ADD COLUMN terms text[] NOT NULL DEFAULT '{}';

CREATE INDEX store_objects_newest ON store_objects (created_at DESC, key);
CREATE INDEX store_objects_terms ON store_objects USING gin (terms);

-- The blocklist: digests (64 lowercase hex characters) whose bytes no
-- upload may store, with the admin's reason. Every process reads it before
-- an upload commits, so a block holds across the cluster at once.
CREATE TABLE store_blocked (
    sha256      text PRIMARY KEY,
    body        jsonb NOT NULL,
    blocked_at  bigint NOT NULL
);

-- The admin's queue of visitors' reports, oldest first; a report leaves it
-- when the admin clears it.
CREATE TABLE store_reports (
    id           text PRIMARY KEY,
    reported_at  bigint NOT NULL,
    body         jsonb NOT NULL
);
CREATE INDEX store_reports_order ON store_reports (reported_at, id);
