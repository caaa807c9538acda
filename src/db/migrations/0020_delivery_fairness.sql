-- Fair shares of the webhook workers (issue 44): deliveries are claimed from this table by the
-- dispatcher (src/webhooks/dispatcher.ts), round-robin across organizations and endpoints, instead
-- of one pg-boss job per attempt in creation order. An endpoint's circuit breaker lives on its row.
ALTER TABLE "webhook_endpoints" ADD COLUMN "consecutive_failures" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "circuit_open_until" timestamp with time zone;--> statement-breakpoint
-- Set while an attempt is in flight: it counts against its endpoint's and organization's shares,
-- and a worker that died mid-attempt leaves it to be claimed again once it has passed.
ALTER TABLE "webhook_deliveries" ADD COLUMN "lease_until" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_scheduled_idx" ON "webhook_deliveries" USING btree ("endpoint_id","next_attempt_at") WHERE "webhook_deliveries"."job_token" is not null;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_lease_idx" ON "webhook_deliveries" USING btree ("lease_until") WHERE "webhook_deliveries"."lease_until" is not null;--> statement-breakpoint
-- Deliveries scheduled before this release had a pg-boss job of the retired `webhooks.deliver`
-- queue; the dispatcher reads the schedule from the rows, and a due time is all they need.
UPDATE "webhook_deliveries" SET "next_attempt_at" = now() WHERE "job_token" IS NOT NULL AND "next_attempt_at" IS NULL;
