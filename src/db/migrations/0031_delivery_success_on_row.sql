-- A successful attempt is recorded on its delivery's row (attempts, last_attempt_at,
-- response_status and this latency); webhook_attempts keeps the failed attempts.
ALTER TABLE "webhook_deliveries" ADD COLUMN "latency_ms" integer;
