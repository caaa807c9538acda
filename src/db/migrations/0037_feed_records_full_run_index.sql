-- Issue 45: the index that finds the records a previous full run saw holds only those (non-full
-- runs leave full_run_id null, so their records no longer pay an index entry each), keyed by the
-- run alone (a run id names one source, scope and runner). Keyed as before, by (source, scope,
-- contributor_id, full_run_id), it shared the primary key's first three columns: a chunk's lookup
-- of its 2,500 keys planned on an import's first statistics (a nearly empty table) chose it and
-- filtered every record of the runner by key, 85 ms at 200,000 records and growing with them.

DROP INDEX IF EXISTS "feed_records_full_run_idx";--> statement-breakpoint
CREATE INDEX "feed_records_full_run_idx" ON "feed_records" USING btree ("full_run_id") WHERE "full_run_id" IS NOT NULL;
