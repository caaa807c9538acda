-- Issue 48 (brief W6): the schedule of the deliveries still to go out is written twice per delivery
-- (inserted with it, deleted by its settle), each write with its WAL: three records an insert (the
-- row and its two index entries), 300 of the 713 a fan-out of 100 deliveries wrote. It becomes an
-- unlogged table, like the leases: PostgreSQL empties it when it recovers from a crash (and a
-- promoted standby has it empty), and a worker process rebuilds it at start from the deliveries
-- still pending or retrying (src/webhooks/schedule-rebuild.ts). webhook_schedule_kept holds one row
-- while the schedule is whole: unlogged too, it is emptied with the schedule, which is how a worker
-- knows the schedule was lost.
ALTER TABLE "webhook_pending_deliveries" SET UNLOGGED;--> statement-breakpoint
CREATE UNLOGGED TABLE "webhook_schedule_kept" (
	"kept" boolean PRIMARY KEY DEFAULT true NOT NULL,
	CONSTRAINT "webhook_schedule_kept_one_row" CHECK ("kept")
);--> statement-breakpoint
INSERT INTO "webhook_schedule_kept" DEFAULT VALUES;
