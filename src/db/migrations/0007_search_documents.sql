ALTER TABLE "brands" ADD COLUMN "search_vector" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('catalog'::regconfig, "name"), 'A')) STORED NOT NULL;--> statement-breakpoint
ALTER TABLE "brands" ADD COLUMN "search_text" text GENERATED ALWAYS AS (catalog_fold("name"::text)) STORED NOT NULL;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "brand_name" varchar(255) DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "search_vector" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('catalog'::regconfig, "product_name"), 'A') || setweight(to_tsvector('catalog'::regconfig, "manufacturer"), 'C') || setweight(to_tsvector('catalog'::regconfig, "description"), 'C') || setweight(to_tsvector('catalog'::regconfig, "ingredients_text"), 'D') || setweight(to_tsvector('catalog'::regconfig, "brand_name"), 'B') || setweight(to_tsvector('catalog'::regconfig, "gtin"::text || ' ' || ltrim("gtin", '0')), 'A')) STORED NOT NULL;--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "search_text" text GENERATED ALWAYS AS (catalog_fold("product_name"::text || ' ' || "brand_name"::text)) STORED NOT NULL;--> statement-breakpoint
ALTER TABLE "retailers" ADD COLUMN "search_vector" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('catalog'::regconfig, "name"), 'A') || setweight(to_tsvector('catalog'::regconfig, "category"), 'C')) STORED NOT NULL;--> statement-breakpoint
ALTER TABLE "retailers" ADD COLUMN "search_text" text GENERATED ALWAYS AS (catalog_fold("name"::text)) STORED NOT NULL;--> statement-breakpoint
CREATE INDEX "brands_search_vector_idx" ON "brands" USING gin ("search_vector");--> statement-breakpoint
CREATE INDEX "brands_search_text_idx" ON "brands" USING gin ("search_text" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "products_brand_idx" ON "products" USING btree ("brand_id");--> statement-breakpoint
CREATE INDEX "products_search_vector_idx" ON "products" USING gin ("search_vector");--> statement-breakpoint
CREATE INDEX "products_search_text_idx" ON "products" USING gin ("search_text" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "retailers_search_vector_idx" ON "retailers" USING gin ("search_vector");--> statement-breakpoint
CREATE INDEX "retailers_search_text_idx" ON "retailers" USING gin ("search_text" gin_trgm_ops);