-- The database's own name for itself: a random id, made once. A bucket
-- prefix's marker object names the database that owns it, so that a
-- second service pointed at the same prefix with another database
-- refuses to start instead of collecting the first one's bytes as
-- orphans (CONTRACT.md, "Faults in a cluster").
CREATE TABLE store_identity (
    one  boolean PRIMARY KEY DEFAULT true CHECK (one),
    id   text NOT NULL
);
INSERT INTO store_identity (id) VALUES (gen_random_uuid()::text);
