-- What PostgreSQL is asked for one durable 1 KiB upload on the cluster
-- (store-pg: PgLedgers::try_reserve, PgRepository::intend and
-- INSERT_NEW_SETTLED), as a pgbench script: bench/cluster-uploads.sh runs
-- it with as many clients as its wrk has connections, as the ceiling
-- PostgreSQL itself sets on the cluster's uploads. The clients stand for
-- two storesrv processes (a reservation row each), as scripts/cluster
-- runs. Keep it in step with those statements.
\set r random(1, 1000000000000)
\set p :client_id % 2
SELECT store_reserve('store', 'pgbench-' || :p::text, 0, 1024, 1000000000000);
INSERT INTO store_intents (blob, until_ms) VALUES ('pgbench-' || :r::text || '-' || :client_id::text, 4000000000000) ON CONFLICT (blob) DO UPDATE SET until_ms = greatest(store_intents.until_ms, EXCLUDED.until_ms);
WITH w AS (INSERT INTO store_objects (key, body, expires_at, tags, pool_bytes, pics_bytes, listing, created_at, terms) VALUES ('pgbench-' || :r::text || '-' || :client_id::text, '{"id": "pgbenchfile01", "blob": "e2a90d24637dca91717c84e18747315d", "kind": "file", "link": false, "name": "a.txt", "once": false, "size": 1024, "tags": [], "text": true, "owner": {"token_hash": "b6f7f7cbcdb52bb6621035d00393641f6b322482551589df4e3daa490097103c"}, "thumbs": [], "lifetime": {"mode": "fixed", "expires_at": 4000000000000}, "created_at": 1795901760810, "updated_at": 1795901760810, "content_type": "text/plain"}'::text::jsonb, 4000000000000, '{}', 1024, 0, NULL, 1795901760810, ARRAY['*', 'type' || chr(58) || 'text/plain', 'word' || chr(58) || 'txt']) ON CONFLICT (key) DO NOTHING RETURNING rev), s AS (UPDATE store_reservations SET bytes = greatest(bytes - 1024, 0) WHERE process = 'pgbench-' || :p::text AND pool = 'store' AND EXISTS (SELECT 1 FROM w)) SELECT rev FROM w;
