ALTER TABLE "barcode_batches" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "barcode_batches" ADD COLUMN "expired_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "barcode_batches_organization_created_idx" ON "barcode_batches" USING btree ("organization_id","created");