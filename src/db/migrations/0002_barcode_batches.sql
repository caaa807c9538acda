CREATE TYPE "public"."barcode_batch_status" AS ENUM('queued', 'running', 'succeeded', 'failed');--> statement-breakpoint
CREATE TABLE "barcode_batches" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"status" "barcode_batch_status" DEFAULT 'queued' NOT NULL,
	"items" jsonb NOT NULL,
	"settings" jsonb NOT NULL,
	"output" varchar(8) NOT NULL,
	"template" varchar(16),
	"total" integer NOT NULL,
	"completed" integer DEFAULT 0 NOT NULL,
	"errors" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"file_path" text,
	"failure" text,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "barcode_batches" ADD CONSTRAINT "barcode_batches_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;