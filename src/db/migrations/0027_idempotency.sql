-- Idempotency keys (issue 48): one row per (scope, key) of a POST sent with an Idempotency-Key
-- header: `scope` is the API key's organization (or the admin token), `caller` the key that sent it.
-- While the request runs, `lock_token` is set and the response columns are null; once it has
-- answered, the stored response is replayed for 24 h to the same caller sending the same request.
-- A pg-boss schedule deletes rows past that.
CREATE TABLE IF NOT EXISTS "idempotency_keys" (
	"scope" varchar(64) NOT NULL,
	"key" varchar(255) NOT NULL,
	"caller" varchar(64) NOT NULL,
	"method" varchar(16) NOT NULL,
	"path" text NOT NULL,
	"content_type" varchar(255) NOT NULL DEFAULT '',
	"request_bytes" bigint,
	"request_hash" varchar(64),
	"lock_token" uuid,
	"response_status" integer,
	"response_headers" jsonb,
	"response_body" bytea,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("scope", "key")
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "idempotency_keys_created_idx" ON "idempotency_keys" ("created");
--> statement-breakpoint
-- The W3C traceparent of the request that emitted an event (null when none was traced): its
-- jobs and webhook deliveries continue that trace. Nullable without a default: no table rewrite.
ALTER TABLE "events" ADD COLUMN IF NOT EXISTS "trace_parent" varchar(55);
