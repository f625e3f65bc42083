-- Live records counted by kind (the `kind` of the record's JSON: file,
-- bundle, dir, gallery, image), for the operator's
-- `storesrv_objects{kind}`. Kept by the same trigger as the other totals,
-- in the same transaction as every record change, and sharded the same
-- way.

-- Writers of an older build wait while the counts are taken, so that no
-- change falls between the count and the new trigger.
LOCK TABLE store_objects IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE store_kind_totals (
    shard    int NOT NULL CHECK (shard >= 0 AND shard < 16),
    kind     text NOT NULL,
    objects  bigint NOT NULL,
    PRIMARY KEY (shard, kind)
);

INSERT INTO store_kind_totals (shard, kind, objects)
SELECT abs(hashtext(key)) % 16, body->>'kind', count(*)
  FROM store_objects
 GROUP BY 1, 2;

CREATE OR REPLACE FUNCTION store_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE store_totals
           SET objects = objects - 1,
               pool_bytes = pool_bytes - OLD.pool_bytes,
               pics_bytes = pics_bytes - OLD.pics_bytes
         WHERE shard = abs(hashtext(OLD.key)) % 16;
        UPDATE store_kind_totals
           SET objects = objects - 1
         WHERE shard = abs(hashtext(OLD.key)) % 16 AND kind = OLD.body->>'kind';
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        UPDATE store_totals
           SET objects = objects + 1,
               pool_bytes = pool_bytes + NEW.pool_bytes,
               pics_bytes = pics_bytes + NEW.pics_bytes
         WHERE shard = abs(hashtext(NEW.key)) % 16;
        INSERT INTO store_kind_totals (shard, kind, objects)
        VALUES (abs(hashtext(NEW.key)) % 16, NEW.body->>'kind', 1)
        ON CONFLICT (shard, kind) DO UPDATE
           SET objects = store_kind_totals.objects + 1;
    END IF;
    RETURN NULL;
END $$;
