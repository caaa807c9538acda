-- Catalog search on PostgreSQL (src/search): trigram indexes for substring and typo matching,
-- accent-insensitive text search. Both extensions ship with PostgreSQL (contrib).
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE EXTENSION IF NOT EXISTS unaccent;--> statement-breakpoint
-- The `catalog` text search configuration: words lower-cased and stripped of accents, no stemming
-- (names in many languages; prefix and typo matching cover the rest).
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = 'catalog') THEN
    CREATE TEXT SEARCH CONFIGURATION catalog (COPY = simple);
    ALTER TEXT SEARCH CONFIGURATION catalog
      ALTER MAPPING FOR hword, hword_part, word, asciiword, asciihword, hword_asciipart WITH unaccent, simple;
  END IF;
END $$;--> statement-breakpoint
-- Text folded for substring and trigram matching: lower case, no accents. unaccent() is only
-- STABLE (its dictionary could change); naming the dictionary makes this safe to index.
CREATE OR REPLACE FUNCTION catalog_fold(value text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  RETURN lower(unaccent('unaccent'::regdictionary, value));
