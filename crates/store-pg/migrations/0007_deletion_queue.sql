-- Blobs to delete, queued in the same transaction as the record change
-- that stopped naming them (docs/ARCHITECTURE.md, "Deferred deletion").
--
-- Why: deleting bytes inside the request raced with readers in other
-- processes (a reader who had just read the old record found its bytes
-- gone: 404 for a live object) and failed requests that had committed
-- (the bucket refused the delete: 500, though the change had landed).
-- Queued, the bytes outlive every download that began before the change,
-- and a refused delete is retried later by any process.
--
-- `due_at` is the database's clock: when the grace ends, and, once a
-- process has claimed the row, when its claim runs out (a process killed
-- mid-drain leaves the row to come due again).
CREATE TABLE store_doomed (
    blob      text PRIMARY KEY,
    due_at    timestamptz NOT NULL,
    attempts  int NOT NULL DEFAULT 0
);
CREATE INDEX store_doomed_due ON store_doomed (due_at);
