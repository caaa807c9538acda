-- Issue 45, set-based chunks at the catalog floor's pace: what a feed row costs to write.
-- A bulk writer's marks (a feed chunk's) wait until the writer has gone quiet (or for a bounded
-- time): the search drain no longer competes with the import for the same cores (marks.ts).
ALTER TABLE "search_index_pending" ADD COLUMN "bulk" boolean DEFAULT false NOT NULL;--> statement-breakpoint
DROP INDEX IF EXISTS "search_index_pending_marked_idx";--> statement-breakpoint
CREATE INDEX "search_index_pending_bulk_marked_idx" ON "search_index_pending" USING btree ("bulk","marked");--> statement-breakpoint
-- No query reads products by allergen: the search filter reads its documents' copy (search_products),
-- and a negated overlap (`not (a && b)`) cannot use a GIN index anyway. It cost 28 % of a feed's
-- product insert.
DROP INDEX IF EXISTS "products_allergens_idx";--> statement-breakpoint
-- The owner's product list (owner_id = $1 order by gtin) is its only reader; the feed's unowned
-- millions no longer enter it.
DROP INDEX IF EXISTS "products_owner_gtin_idx";--> statement-breakpoint
CREATE INDEX "products_owner_gtin_idx" ON "products" USING btree ("owner_id","gtin") WHERE "owner_id" IS NOT NULL;
--> statement-breakpoint
-- A chunk's records are stored once and read back once, never queried: as json PostgreSQL checks
-- the text instead of building (and later printing) a jsonb tree, about a third of the cost.
ALTER TABLE "feed_run_chunks" ALTER COLUMN "payload" SET DATA TYPE json USING "payload"::json;
