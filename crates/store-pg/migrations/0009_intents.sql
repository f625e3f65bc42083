-- Uploads in progress, on any process: each names the blob it writes and
-- until when its intent holds (milliseconds of the database's clock, as
-- the process reads it). The orphan collection reads the intents after
-- listing the bucket and before reading the records, and spares every
-- blob named here (docs/ARCHITECTURE.md, "Bytes in flight").
--
-- Why: an upload commits its bytes first and its record after. Another
-- process's collection that listed the bytes in between found them
-- named by no record and removed them; a one-hour age limit guarded
-- against that only while the clocks agreed and the upload was quick (a
-- multipart upload's object is dated when it began).
--
-- A writer renews its intent as it writes and as it commits, once a
-- minute has passed since the last renewal; an intent
-- whose writer died ends on its own, and the next collection forgets it.
CREATE TABLE store_intents (
    blob      text PRIMARY KEY,
    until_ms  bigint NOT NULL
);
CREATE INDEX store_intents_until ON store_intents (until_ms);
