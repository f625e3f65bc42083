-- Every record carries a revision, so that every state change can be a
-- conditional write: `UPDATE ... WHERE key = $1 AND rev = $2`, and likewise
-- for DELETE (docs/ARCHITECTURE.md, "Fenced writes").
--
-- Why: a key's advisory lock lives on one session while reads and writes
-- use others. When that session is lost (terminated, the database
-- restarted) or its process freezes past the lock's bound, another
-- process takes the lock while the first one still runs; its writes must
-- then fail instead of landing over newer state, or a once file is served
-- twice and an append is lost.
--
-- Revisions come from one sequence, not from a per-row counter: a record
-- removed and created again under the same key (a dir's name) never gets a
-- revision it had before, so a write conditioned on the old record cannot
-- land on the new one.
CREATE SEQUENCE store_rev_seq;
ALTER TABLE store_objects ADD COLUMN rev bigint;
UPDATE store_objects SET rev = nextval('store_rev_seq');
ALTER TABLE store_objects ALTER COLUMN rev SET DEFAULT nextval('store_rev_seq');
ALTER TABLE store_objects ALTER COLUMN rev SET NOT NULL;
