-- Search documents off the catalog rows (issue 45): the search feature keeps one document per
-- product, brand and retailer in tables of its own, built by src/search/documents.ts (in the writer's
-- transaction for a write through the API, by the `search.index` drain for marked rows). Here they
-- are built once for the rows that exist, with the same SQL; then the generated search columns,
-- brand_name, their indexes and triggers leave products, brands and retailers.
CREATE TABLE "search_products" (
	"id" uuid PRIMARY KEY NOT NULL,
	"title_len" smallint NOT NULL,
	"search_vector" tsvector NOT NULL,
	"title_vector" tsvector NOT NULL,
	"title_keys" tsvector NOT NULL,
	"search_text" text NOT NULL,
	"contains_allergens" text[] NOT NULL,
	"certifications" text[] NOT NULL,
	"confident_substances" text[] NOT NULL
);
--> statement-breakpoint
CREATE TABLE "search_brands" (
	"id" uuid PRIMARY KEY NOT NULL,
	"title_len" smallint NOT NULL,
	"search_vector" tsvector NOT NULL,
	"search_text" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "search_retailers" (
	"id" uuid PRIMARY KEY NOT NULL,
	"organization_id" uuid NOT NULL,
	"is_active" boolean NOT NULL,
	"is_canonical" boolean NOT NULL,
	"title_len" smallint NOT NULL,
	"search_vector" tsvector NOT NULL,
	"title_vector" tsvector NOT NULL,
	"search_text" text NOT NULL
);
--> statement-breakpoint
INSERT INTO search_products (id, title_len, search_vector, title_vector, title_keys, search_text,
    contains_allergens, certifications, confident_substances)
  SELECT p.id, least(length(v.p0 || v.p4), 32767)::smallint,
    v.p0 || v.p1 || v.p2 || v.p3 || v.p4 || v.p5,
    v.p0 || v.p4 || v.p5,
    catalog_title_keys(v.p0 || v.p4 || v.p5, least(length(v.p0 || v.p4), 32767)),
    catalog_fold(p.product_name::text || ' ' || coalesce(b.name, '')::text),
    p.contains_allergens, p.certifications,
    array(SELECT DISTINCT s->>'slug' FROM jsonb_array_elements(p.substances) s
      WHERE (s->>'confidence')::float8 >= 0.8 ORDER BY 1)
  FROM products p LEFT JOIN brands b ON b.id = p.brand_id
    CROSS JOIN LATERAL (SELECT
      CASE WHEN p.product_name = '' THEN ''::tsvector ELSE setweight(to_tsvector('catalog'::regconfig, p.product_name), 'A') END AS p0,
      CASE WHEN p.manufacturer = '' THEN ''::tsvector ELSE setweight(to_tsvector('catalog'::regconfig, p.manufacturer), 'C') END AS p1,
      CASE WHEN p.description = '' THEN ''::tsvector ELSE setweight(to_tsvector('catalog'::regconfig, p.description), 'C') END AS p2,
      CASE WHEN p.ingredients_text = '' THEN ''::tsvector ELSE setweight(to_tsvector('catalog'::regconfig, p.ingredients_text), 'D') END AS p3,
      CASE WHEN coalesce(b.name, '') = '' THEN ''::tsvector ELSE setweight(to_tsvector('catalog'::regconfig, coalesce(b.name, '')), 'B') END AS p4,
      setweight(to_tsvector('catalog'::regconfig, p.gtin::text || ' ' || ltrim(p.gtin, '0')), 'A') AS p5
      OFFSET 0) v;
--> statement-breakpoint
INSERT INTO search_brands (id, title_len, search_vector, search_text)
  SELECT b.id, least(length(v.name), 32767)::smallint, v.name, catalog_fold(b.name::text)
  FROM brands b CROSS JOIN LATERAL (SELECT setweight(to_tsvector('catalog'::regconfig, b.name), 'A') AS name OFFSET 0) v;
--> statement-breakpoint
INSERT INTO search_retailers (id, organization_id, is_active, is_canonical, title_len, search_vector, title_vector, search_text)
  SELECT r.id, r.organization_id, r.is_active, r.is_canonical, least(length(v.name), 32767)::smallint,
    v.name || v.category, v.name, catalog_fold(r.name::text)
  FROM retailers r CROSS JOIN LATERAL (SELECT
      setweight(to_tsvector('catalog'::regconfig, r.name), 'A') AS name,
      CASE WHEN r.category = '' THEN ''::tsvector ELSE setweight(to_tsvector('catalog'::regconfig, r.category), 'C') END AS category
      OFFSET 0) v;
--> statement-breakpoint
CREATE INDEX "search_products_search_vector_idx" ON "search_products" USING gin ("search_vector");--> statement-breakpoint
CREATE INDEX "search_products_search_text_idx" ON "search_products" USING gin ("search_text" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "search_products_title_keys_idx" ON "search_products" USING gin ("title_keys");--> statement-breakpoint
CREATE INDEX "search_products_title_order_idx" ON "search_products" ("title_len", "id") INCLUDE ("title_vector", "search_text");--> statement-breakpoint
CREATE INDEX "search_brands_search_vector_idx" ON "search_brands" USING gin ("search_vector");--> statement-breakpoint
CREATE INDEX "search_brands_search_text_idx" ON "search_brands" USING gin ("search_text" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "search_brands_title_order_idx" ON "search_brands" ("title_len", "id") INCLUDE ("search_vector", "search_text");--> statement-breakpoint
CREATE INDEX "search_retailers_search_vector_idx" ON "search_retailers" USING gin ("search_vector");--> statement-breakpoint
CREATE INDEX "search_retailers_search_text_idx" ON "search_retailers" USING gin ("search_text" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "search_retailers_title_vector_idx" ON "search_retailers" USING gin ("title_vector");--> statement-breakpoint
CREATE INDEX "search_retailers_title_order_idx" ON "search_retailers" ("title_len", "id") INCLUDE ("title_vector", "search_text");--> statement-breakpoint
-- The marks the drain takes oldest first.
CREATE INDEX "search_index_pending_marked_idx" ON "search_index_pending" ("marked");--> statement-breakpoint
-- Off the catalog rows: the triggers (search_words is now kept by the documents' writer), brand_name
-- and the generated columns (their indexes go with them).
DROP TRIGGER IF EXISTS products_search_words_insert ON products;--> statement-breakpoint
DROP TRIGGER IF EXISTS products_search_words_update ON products;--> statement-breakpoint
DROP TRIGGER IF EXISTS brands_search_words_insert ON brands;--> statement-breakpoint
DROP TRIGGER IF EXISTS brands_search_words_update ON brands;--> statement-breakpoint
DROP TRIGGER IF EXISTS retailers_search_words_insert ON retailers;--> statement-breakpoint
DROP TRIGGER IF EXISTS retailers_search_words_update ON retailers;--> statement-breakpoint
DROP TRIGGER IF EXISTS products_brand_name ON products;--> statement-breakpoint
DROP TRIGGER IF EXISTS brands_rename_products ON brands;--> statement-breakpoint
DROP FUNCTION IF EXISTS search_words_collect();--> statement-breakpoint
DROP FUNCTION IF EXISTS products_brand_name();--> statement-breakpoint
DROP FUNCTION IF EXISTS brands_rename_products();--> statement-breakpoint
ALTER TABLE "products" DROP COLUMN "search_vector", DROP COLUMN "search_text", DROP COLUMN "title_vector",
  DROP COLUMN "title_len", DROP COLUMN "title_keys", DROP COLUMN "brand_name";--> statement-breakpoint
ALTER TABLE "brands" DROP COLUMN "search_vector", DROP COLUMN "search_text", DROP COLUMN "title_len";--> statement-breakpoint
ALTER TABLE "retailers" DROP COLUMN "search_vector", DROP COLUMN "search_text", DROP COLUMN "title_vector",
  DROP COLUMN "title_len";
