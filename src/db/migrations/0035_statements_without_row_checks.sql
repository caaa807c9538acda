-- Issue 45: a feed chunk's statements and feed records no longer check their product row by row.
-- Each foreign-key check was a lookup of the product and a lock on its row (a WAL record, and the
-- row just inserted dirtied again): per 2,500-row chunk 28 ms for the statements and 17 ms for the
-- feed records, a fifth of the chunk's database time. The rows they name are always real: every
-- writer inserts them for products it has just read or made in the same transaction, and no code
-- path deletes a product (the catalog keeps every GTIN it has seen). An operator's own DELETE of
-- products still removes their statements and feed records, as the cascade did: one statement-level
-- trigger for all the deleted rows at once.
ALTER TABLE "product_candidates" DROP CONSTRAINT "product_candidates_product_id_products_id_fk";--> statement-breakpoint
ALTER TABLE "feed_records" DROP CONSTRAINT "feed_records_product_id_products_id_fk";--> statement-breakpoint
CREATE FUNCTION "products_deleted_statements"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM "product_candidates" c USING old_rows o WHERE c."product_id" = o."id";
	DELETE FROM "feed_records" f USING old_rows o WHERE f."product_id" = o."id";
	RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "products_deleted_statements" AFTER DELETE ON "products" REFERENCING OLD TABLE AS old_rows
	FOR EACH STATEMENT EXECUTE FUNCTION "products_deleted_statements"();
