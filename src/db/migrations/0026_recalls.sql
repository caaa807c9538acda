-- Recalls (issue 46): a product under recall carries its reason, when it was recalled, the notice's
-- URL (null: the service serves its own notice page) and the organization that recalled it. All
-- null when no recall is in effect. Nullable columns without a default: no table rewrite.
ALTER TABLE "products" ADD COLUMN IF NOT EXISTS "recall_reason" text;
--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN IF NOT EXISTS "recalled_at" timestamp with time zone;
--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN IF NOT EXISTS "recall_url" varchar(2048);
--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN IF NOT EXISTS "recalled_by" uuid REFERENCES "public"."organizations"("id") ON DELETE set null;
--> statement-breakpoint
ALTER TABLE "products" DROP CONSTRAINT IF EXISTS "products_recall_check";
--> statement-breakpoint
-- NOT VALID: the rows there have no recall (which holds); checking them would scan the catalog under lock
ALTER TABLE "products" ADD CONSTRAINT "products_recall_check" CHECK (
	("recall_reason" IS NULL) = ("recalled_at" IS NULL)
	AND ("recall_reason" IS NOT NULL OR ("recall_url" IS NULL AND "recalled_by" IS NULL))
	AND char_length("recall_reason") BETWEEN 1 AND 1000
) NOT VALID;
