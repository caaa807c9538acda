-- Who runs an import decides its authority (issue 44): a run started with an organization's key
-- is that organization's statement (contributor_id), one started by the platform (admin token,
-- CLI, schedules) has none. Runs recorded before carried their source's weight: left null.
ALTER TABLE "feed_runs" ADD COLUMN "contributor_id" uuid;--> statement-breakpoint
ALTER TABLE "feed_runs" ADD CONSTRAINT "feed_runs_contributor_id_organizations_id_fk" FOREIGN KEY ("contributor_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- What a source last said is kept per runner (the nil UUID: the platform), so one runner's rows
-- neither skip nor report as disappeared another runner's.
ALTER TABLE "feed_records" ADD COLUMN "contributor_id" uuid DEFAULT '00000000-0000-0000-0000-000000000000' NOT NULL;--> statement-breakpoint
ALTER TABLE "feed_records" DROP CONSTRAINT "feed_records_source_scope_key_pk";--> statement-breakpoint
ALTER TABLE "feed_records" ADD CONSTRAINT "feed_records_source_scope_contributor_id_key_pk" PRIMARY KEY("source","scope","contributor_id","key");--> statement-breakpoint
DROP INDEX "feed_records_full_run_idx";--> statement-breakpoint
CREATE INDEX "feed_records_full_run_idx" ON "feed_records" USING btree ("source","scope","contributor_id","full_run_id");
