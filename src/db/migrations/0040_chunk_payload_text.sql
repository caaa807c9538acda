-- Issue 45 (brief I6): a chunk's payload is the JSON text the reader's thread wrote, stored once and
-- read back once by its chunk job, never queried inside. As json (0030), PostgreSQL parsed it on the
-- way in to check it, and the insert's `::jsonb` cast parsed it and printed it back once more: 10.6-11.2
-- µs of the backend's CPU a row on a scratch cluster, against 0.9-1.0 as lz4-compressed text (2.5-2.6
-- as pglz-compressed text, 1.6-2.0 uncompressed, which took 7 times the disk). The chunk job parses the
-- text (JSON.parse), as pg's json reader did. Chunks waiting while this runs keep their records (the
-- same JSON, as text).
ALTER TABLE "feed_run_chunks" ALTER COLUMN "payload" SET DATA TYPE text USING "payload"::text;--> statement-breakpoint
-- A run's chunks can wait in this table all at once (the split reads faster than they are written):
-- compressed, a 3-4 million product dump takes a seventh of its uncompressed size. lz4 costs a third of
-- pglz's CPU; a PostgreSQL built without lz4 keeps the default (pglz).
DO $$
BEGIN
  ALTER TABLE "feed_run_chunks" ALTER COLUMN "payload" SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  RAISE NOTICE 'lz4 is not supported by this PostgreSQL: chunk payloads keep the default compression';
END $$;
