CREATE TABLE "search_words" (
	"word" text PRIMARY KEY NOT NULL
);
--> statement-breakpoint
ALTER TABLE "brands" ADD COLUMN "title_len" smallint GENERATED ALWAYS AS (least(length(to_tsvector('catalog'::regconfig, "name"::text)), 32767)) STORED NOT NULL;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "title_vector" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('catalog'::regconfig, "product_name"), 'A') || setweight(to_tsvector('catalog'::regconfig, "brand_name"), 'B') || setweight(to_tsvector('catalog'::regconfig, "gtin"::text || ' ' || ltrim("gtin", '0')), 'A')) STORED NOT NULL;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "title_len" smallint GENERATED ALWAYS AS (least(length(to_tsvector('catalog'::regconfig, "product_name"::text || ' ' || "brand_name"::text)), 32767)) STORED NOT NULL;--> statement-breakpoint
ALTER TABLE "retailers" ADD COLUMN "title_vector" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('catalog'::regconfig, "name"), 'A')) STORED NOT NULL;--> statement-breakpoint
ALTER TABLE "retailers" ADD COLUMN "title_len" smallint GENERATED ALWAYS AS (least(length(to_tsvector('catalog'::regconfig, "name"::text)), 32767)) STORED NOT NULL;--> statement-breakpoint
CREATE INDEX "search_words_trgm_idx" ON "search_words" USING gin ("word" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "products_title_vector_idx" ON "products" USING gin ("title_vector");--> statement-breakpoint
CREATE INDEX "retailers_title_vector_idx" ON "retailers" USING gin ("title_vector");--> statement-breakpoint
-- Covering indexes in title order: search walks them in order, testing each entry's own document,
-- without visiting the table (src/search/postgres.ts).
CREATE INDEX "products_title_order_idx" ON "products" ("title_len", "id") INCLUDE ("title_vector", "search_text");--> statement-breakpoint
CREATE INDEX "brands_title_order_idx" ON "brands" ("title_len", "id") INCLUDE ("search_vector", "search_text");--> statement-breakpoint
CREATE INDEX "retailers_title_order_idx" ON "retailers" ("title_len", "id") INCLUDE ("title_vector", "search_text");--> statement-breakpoint
-- The words of the names, for typo matching: collected by statement triggers from the rows written
-- (in word order, so concurrent writers take the same locks in the same order).
CREATE OR REPLACE FUNCTION search_words_collect() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_words (word)
    SELECT DISTINCT w FROM new_rows, regexp_split_to_table(new_rows.search_text, '[^[:alnum:]]+') w
    WHERE length(w) >= 3 AND w !~ '^[0-9]+$' ORDER BY w
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER products_search_words_insert AFTER INSERT ON products REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION search_words_collect();--> statement-breakpoint
CREATE TRIGGER products_search_words_update AFTER UPDATE ON products REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION search_words_collect();--> statement-breakpoint
CREATE TRIGGER brands_search_words_insert AFTER INSERT ON brands REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION search_words_collect();--> statement-breakpoint
CREATE TRIGGER brands_search_words_update AFTER UPDATE ON brands REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION search_words_collect();--> statement-breakpoint
CREATE TRIGGER retailers_search_words_insert AFTER INSERT ON retailers REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION search_words_collect();--> statement-breakpoint
CREATE TRIGGER retailers_search_words_update AFTER UPDATE ON retailers REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION search_words_collect();--> statement-breakpoint
INSERT INTO search_words (word)
  SELECT DISTINCT w FROM (
    SELECT search_text FROM products UNION ALL SELECT search_text FROM brands UNION ALL SELECT search_text FROM retailers
  ) t, regexp_split_to_table(t.search_text, '[^[:alnum:]]+') w
  WHERE length(w) >= 3 AND w !~ '^[0-9]+$' ORDER BY w
ON CONFLICT DO NOTHING;
