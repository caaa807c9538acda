-- Issue 45: a feed-made product is checked per statement, not row by row. Its owner_id and
-- recalled_by are NULL, yet their two foreign keys were two trigger calls per inserted row (about
-- 2 µs of a new product's ~21 in the insert). The same rules hold, as migration 0035 keeps them for
-- brands, statements and feed records:
-- - a product's owner_id, recalled_by and brand_id must name existing rows (checked after each
--   INSERT or UPDATE of products: one anti-join per column over the statement's rows, no row locks);
-- - deleting organizations sets the products' owner_id and recalled_by that named them to NULL (the
--   foreign keys' ON DELETE SET NULL), and so does TRUNCATE of organizations (which the foreign keys
--   refused, or with CASCADE emptied the whole catalog: the products stay, owned by nobody).
-- Without the row lock, the deletion of organizations takes a SHARE lock on products: it waits for
-- the product writers at work (and then sees their rows), and the writers that come after it wait
-- for it (and then see the organizations gone, and are refused). No code path deletes an
-- organization: only an operator's SQL does.

ALTER TABLE "products" DROP CONSTRAINT IF EXISTS "products_owner_id_organizations_id_fk";--> statement-breakpoint
ALTER TABLE "products" DROP CONSTRAINT IF EXISTS "products_recalled_by_fkey";--> statement-breakpoint

DROP TRIGGER "products_name_brands" ON "products";--> statement-breakpoint
DROP TRIGGER "products_name_brands_updated" ON "products";--> statement-breakpoint
DROP FUNCTION "products_name_brands"();--> statement-breakpoint
CREATE FUNCTION "products_name_rows"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF EXISTS (SELECT 1 FROM new_rows n WHERE n."brand_id" IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM "brands" b WHERE b."id" = n."brand_id")) THEN
		RAISE foreign_key_violation USING MESSAGE = 'a product names a brand that does not exist';
	END IF;
	IF EXISTS (SELECT 1 FROM new_rows n WHERE n."owner_id" IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM "organizations" o WHERE o."id" = n."owner_id")) THEN
		RAISE foreign_key_violation USING MESSAGE = 'a product names an owner organization that does not exist';
	END IF;
	IF EXISTS (SELECT 1 FROM new_rows n WHERE n."recalled_by" IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM "organizations" o WHERE o."id" = n."recalled_by")) THEN
		RAISE foreign_key_violation USING MESSAGE = 'a product names a recalling organization that does not exist';
	END IF;
	RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "products_name_rows" AFTER INSERT ON "products" REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION "products_name_rows"();--> statement-breakpoint
CREATE TRIGGER "products_name_rows_updated" AFTER UPDATE ON "products" REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION "products_name_rows"();--> statement-breakpoint

CREATE FUNCTION "organizations_deleted_products"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	-- waits for the product writers at work; the statements below then see what they wrote
	LOCK TABLE "products" IN SHARE MODE;
	-- one statement: the check after it sees both columns cleared
	UPDATE "products" p SET
		"owner_id" = CASE WHEN p."owner_id" IN (SELECT "id" FROM old_rows) THEN NULL ELSE p."owner_id" END,
		"recalled_by" = CASE WHEN p."recalled_by" IN (SELECT "id" FROM old_rows) THEN NULL ELSE p."recalled_by" END
	WHERE p."owner_id" IN (SELECT "id" FROM old_rows) OR p."recalled_by" IN (SELECT "id" FROM old_rows);
	RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "organizations_deleted_products" AFTER DELETE ON "organizations" REFERENCING OLD TABLE AS old_rows
	FOR EACH STATEMENT EXECUTE FUNCTION "organizations_deleted_products"();--> statement-breakpoint
CREATE FUNCTION "organizations_truncated_products"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	LOCK TABLE "products" IN SHARE MODE;
	UPDATE "products" SET "owner_id" = NULL, "recalled_by" = NULL WHERE "owner_id" IS NOT NULL OR "recalled_by" IS NOT NULL;
	RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "organizations_truncated_products" AFTER TRUNCATE ON "organizations"
	FOR EACH STATEMENT EXECUTE FUNCTION "organizations_truncated_products"();
