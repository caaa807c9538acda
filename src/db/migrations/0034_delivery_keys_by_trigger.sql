-- Issue 48 (brief W): the fan-out's insert of 2,000 deliveries took 52 ms in EXPLAIN ANALYZE, 27 of
-- them in its two foreign keys' checks (the endpoint's 12 ms, the schedule row's 14.5 ms): a lookup
-- and a row lock per delivery, the second on the delivery row just inserted, dirtying it before its
-- settle. Both keys go; what they kept is kept this way:
-- - a schedule row is only ever inserted in the statement that inserts its delivery (deliveries.ts:
--   createDeliveries, queueDeliveries, recoverEndpoint), so it always has one; deleting deliveries
--   deletes their schedule rows (the cascade, now the statement trigger below);
-- - a delivery's endpoint: every insert holds a lock on the endpoint row until it commits (the
--   fan-out reads its endpoints FOR KEY SHARE, as the key's check did; a resend, a recovery and a
--   test lock theirs FOR UPDATE), so the endpoint cannot be deleted under it; deleting endpoints
--   (only ever through their organization's cascade: an API delete sets deleted_at) deletes their
--   deliveries, and through the trigger above their schedule rows, and through webhook_attempts'
--   key their failed attempts.
-- A statement trigger with a transition table: one delete per statement, not per row.
ALTER TABLE "webhook_pending_deliveries" DROP CONSTRAINT "webhook_pending_deliveries_delivery_id_webhook_deliveries_id_fk";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_endpoint_id_webhook_endpoints_id_fk";--> statement-breakpoint
CREATE OR REPLACE FUNCTION webhook_deliveries_unschedule() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM webhook_pending_deliveries p USING gone g WHERE p.delivery_id = g.id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER webhook_deliveries_unschedule AFTER DELETE ON webhook_deliveries
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION webhook_deliveries_unschedule();--> statement-breakpoint
CREATE OR REPLACE FUNCTION webhook_endpoints_deliveries_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM webhook_deliveries d USING gone g WHERE d.endpoint_id = g.id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER webhook_endpoints_deliveries_gone AFTER DELETE ON webhook_endpoints
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION webhook_endpoints_deliveries_gone();
