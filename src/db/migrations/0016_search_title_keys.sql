-- Title matches by title length (src/search/postgres.ts): each word of a product's title is kept
-- tagged with the title's length ('5 peanut'; 16 words or more share the tag 16), so one GIN lookup
-- finds the titles of one length that have the query's words, without visiting longer titles. A tag
-- holds a space, which no word of a query can hold: only catalog_title_query writes tagged terms.
CREATE FUNCTION catalog_title_keys(title tsvector, len integer) RETURNS tsvector
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT array_to_tsvector(array(SELECT least(len, 16)::text || ' ' || w FROM unnest(tsvector_to_array(title)) w))
$$;--> statement-breakpoint
-- The query's terms tagged for one title length: the same words, phrases loosened to "all of them"
-- (tags have no positions; the title itself then checks the phrase), prefixes kept.
CREATE FUNCTION catalog_title_query(q tsquery, len integer) RETURNS tsquery
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT regexp_replace(regexp_replace(q::text, '<[0-9]+>|<->', '&', 'g'),
    '''((?:[^'']|'''')*)''', '''' || least(len, 16)::text || ' \1''', 'g')::tsquery
$$;--> statement-breakpoint
DROP INDEX "products_title_vector_idx";--> statement-breakpoint
ALTER TABLE "products" ADD COLUMN "title_keys" "tsvector" GENERATED ALWAYS AS (catalog_title_keys(setweight(to_tsvector('catalog'::regconfig, "product_name"), 'A') || setweight(to_tsvector('catalog'::regconfig, "brand_name"), 'B') || setweight(to_tsvector('catalog'::regconfig, "gtin"::text || ' ' || ltrim("gtin", '0')), 'A'), least(length(to_tsvector('catalog'::regconfig, "product_name"::text || ' ' || "brand_name"::text)), 32767))) STORED NOT NULL;--> statement-breakpoint
CREATE INDEX "products_title_keys_idx" ON "products" USING gin ("title_keys");