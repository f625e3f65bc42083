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

-- The webhooks' outbox (docs/DECISIONS.md, "Webhooks"). A change of a
-- record that is an event (store-core's events::change_event) puts it here
-- in the change's own transaction, by the trigger below: a creation (an
-- upload's record turning into its file is one), and a removal, which is
-- an expiry when the record's lifetime was over by the database's clock
-- (the clock every process reads) and a deletion otherwise. Records of
-- uploads in progress make none. `body` is the record (for the events of
-- records) or the event's data (a report's, a block's). Deliverers claim
-- each object's earliest event with FOR UPDATE SKIP LOCKED and keep it
-- for a lease (`claimed_until`); a deliverer that dies leaves it to come
-- due again.
CREATE TABLE store_outbox (
    seq            bigserial PRIMARY KEY,
    key            text NOT NULL,
    type           text NOT NULL,
    at             bigint NOT NULL,
    body           jsonb NOT NULL,
    attempts       int NOT NULL DEFAULT 0,
    next_at        bigint NOT NULL,
    claimed_until  bigint NOT NULL DEFAULT 0
);
CREATE INDEX store_outbox_key ON store_outbox (key, seq);

-- Whether changes write events: on while the servers have a webhook
-- (STORE_WEBHOOK_URL), set by each server as it starts.
CREATE TABLE store_outbox_state (
    one     boolean PRIMARY KEY DEFAULT true CHECK (one),
    events  boolean NOT NULL
);
INSERT INTO store_outbox_state (events) VALUES (false);

CREATE FUNCTION store_outbox_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    now_ms  bigint;
    kind    text;
    rec     jsonb;
    k       text;
BEGIN
    IF NOT (SELECT events FROM store_outbox_state) THEN
        RETURN NULL;
    END IF;
    now_ms := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    IF TG_OP = 'INSERT' THEN
        IF NEW.body->>'kind' = 'upload' THEN RETURN NULL; END IF;
        kind := 'object.created'; rec := NEW.body; k := NEW.key;
    ELSIF TG_OP = 'UPDATE' THEN
        IF OLD.body->>'kind' <> 'upload' OR NEW.body->>'kind' = 'upload' THEN
            RETURN NULL;
        END IF;
        kind := 'object.created'; rec := NEW.body; k := NEW.key;
    ELSE
        IF OLD.body->>'kind' = 'upload' THEN RETURN NULL; END IF;
        kind := CASE WHEN OLD.expires_at IS NOT NULL AND OLD.expires_at <= now_ms
                     THEN 'object.expired' ELSE 'object.deleted' END;
        rec := OLD.body; k := OLD.key;
    END IF;
    INSERT INTO store_outbox (key, type, at, body, next_at) VALUES (k, kind, now_ms, rec, now_ms);
    RETURN NULL;
END
$$;

CREATE TRIGGER store_objects_outbox AFTER INSERT OR UPDATE OR DELETE ON store_objects
    FOR EACH ROW EXECUTE FUNCTION store_outbox_change();
