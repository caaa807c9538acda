-- Issue 48: a delivery's row is written twice (inserted, then settled in place), not three times.
-- Its schedule and its leases move to two small tables of their own: before, the claim and the
-- settle each rewrote the delivery's row into all six indexes (both changed an indexed column), so
-- no update was HOT, and counting the leases walked the dead entries of every lease of the last 20 s.
--
-- The deliveries still to go out: the fan-out inserts one row per delivery, a success deletes it,
-- a failed attempt moves its next_attempt_at. A null next_attempt_at: it waits for its endpoint to be
-- switched on. attempts and event_id are copied here so that the claim never reads the deliveries.
CREATE TABLE "webhook_pending_deliveries" (
	"delivery_id" uuid PRIMARY KEY NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"organization_id" uuid NOT NULL,
	"event_id" uuid NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "webhook_pending_deliveries" ADD CONSTRAINT "webhook_pending_deliveries_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."webhook_deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_pending_deliveries_endpoint_idx" ON "webhook_pending_deliveries" USING btree ("endpoint_id","next_attempt_at");--> statement-breakpoint
-- An endpoint's attempts in flight: at most its concurrency of slots, each updated in place (HOT: no
-- index covers what changes), so counting the leases reads a few rows. Unlogged: PostgreSQL empties
-- it after a crash of its own, and the attempts then in flight are made again (receivers deduplicate
-- by event id, as after any lost lease).
CREATE UNLOGGED TABLE "webhook_leases" (
	"endpoint_id" uuid NOT NULL,
	"slot" integer NOT NULL,
	"organization_id" uuid NOT NULL,
	"delivery_id" uuid,
	"token" uuid,
	"lease_until" timestamp with time zone,
	CONSTRAINT "webhook_leases_endpoint_id_slot_pk" PRIMARY KEY("endpoint_id","slot")
) WITH (fillfactor = 50);
--> statement-breakpoint
CREATE INDEX "webhook_leases_organization_idx" ON "webhook_leases" USING btree ("organization_id");--> statement-breakpoint
-- Deliveries scheduled before this migration still go out (their leases lapse: one in flight now
-- is attempted again).
INSERT INTO "webhook_pending_deliveries" ("delivery_id", "endpoint_id", "organization_id", "event_id", "attempts", "next_attempt_at")
SELECT "id", "endpoint_id", "organization_id", "event_id", "attempts",
  CASE WHEN "job_token" IS NOT NULL THEN coalesce("next_attempt_at", now()) END
FROM "webhook_deliveries" WHERE "status" IN ('pending', 'retrying');
--> statement-breakpoint
DROP INDEX IF EXISTS "webhook_deliveries_scheduled_idx";--> statement-breakpoint
DROP INDEX IF EXISTS "webhook_deliveries_lease_idx";--> statement-breakpoint
-- Its readers were the schedule's (now webhook_pending_deliveries) and the events' cascade (events are
-- never deleted).
DROP INDEX IF EXISTS "webhook_deliveries_event_idx";--> statement-breakpoint
-- The settle changes the status: indexed, no update of it could be HOT. An endpoint's deliveries are
-- listed newest first, like an organization's (a status filter reads them in that order).
DROP INDEX IF EXISTS "webhook_deliveries_endpoint_idx";--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries" USING btree ("endpoint_id","created","id");--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP COLUMN "job_token";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP COLUMN "lease_until";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP COLUMN "next_attempt_at";--> statement-breakpoint
-- Each foreign key is a lookup and a row lock per delivery inserted (half of the fan-out's insert,
-- measured). The organization's is redundant: a delivery's endpoint belongs to its organization, and
-- deleting the organization deletes its endpoints and, through theirs, their deliveries. Events are
-- never deleted, and a delivery is only ever made from an event read from that table.
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_organization_id_organizations_id_fk";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_event_id_events_id_fk";--> statement-breakpoint
-- Room on each page for the settled versions of its rows, so the settle stays on the page (HOT): a
-- batch of settles often covers most rows of a page in one transaction (rows of one fan-out sit
-- together), and a version can only replace one on the same page if there is space for it there.
ALTER TABLE "webhook_deliveries" SET (fillfactor = 50);
