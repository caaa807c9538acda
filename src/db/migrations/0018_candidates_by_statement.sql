-- Candidates become one row per statement of a source: the fields it gave at once, by name
-- (src/db/schema/catalog.ts). Rows written before keep one field each, which reads the same.
DROP INDEX "product_candidates_product_field_idx";--> statement-breakpoint
ALTER TABLE "product_candidates" ADD COLUMN "fields" jsonb;--> statement-breakpoint
UPDATE "product_candidates" SET "fields" = jsonb_build_object("field", "value");--> statement-breakpoint
ALTER TABLE "product_candidates" ALTER COLUMN "fields" SET NOT NULL;--> statement-breakpoint
CREATE INDEX "product_candidates_product_created_idx" ON "product_candidates" USING btree ("product_id","created");--> statement-breakpoint
ALTER TABLE "product_candidates" DROP COLUMN "field";--> statement-breakpoint
ALTER TABLE "product_candidates" DROP COLUMN "value";--> statement-breakpoint
-- The candidates one value a row, as promotion weighs them (src/catalog/provenance.ts).
CREATE VIEW "product_candidate_values" AS
  SELECT c.id, c.product_id, f.key AS field, f.value, c.source, c.confidence, c.contributor_id, c.created
  FROM "product_candidates" c CROSS JOIN LATERAL jsonb_each(c.fields) f;
