-- storesrv schema, version 2: the listings index. `listing` is the code of
-- the public listing a record appears in (store-core's Object::listing:
-- 1 browse, 2 dirs, 3 galleries), so that GET /browse, GET /d and
-- GET /pics read the listed rows and never the whole table. The rows
-- written before this version get their code from storesrv itself, in the
-- same transaction (schema.rs), since only it can read a record.
ALTER TABLE store_objects ADD COLUMN listing smallint;

CREATE INDEX store_objects_listing ON store_objects (listing, key)
    WHERE listing IS NOT NULL;
