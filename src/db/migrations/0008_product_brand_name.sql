-- products.brand_name follows products.brand_id (and a brand's renaming), so the product's search
-- document can include its brand. Generated columns are computed after BEFORE triggers.
CREATE OR REPLACE FUNCTION products_brand_name() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.brand_name := coalesce((SELECT name FROM brands WHERE id = NEW.brand_id), '');
  RETURN NEW;
END $$;--> statement-breakpoint
CREATE TRIGGER products_brand_name BEFORE INSERT OR UPDATE OF brand_id ON products
  FOR EACH ROW EXECUTE FUNCTION products_brand_name();--> statement-breakpoint
CREATE OR REPLACE FUNCTION brands_rename_products() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE products SET brand_name = NEW.name WHERE brand_id = NEW.id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER brands_rename_products AFTER UPDATE OF name ON brands
  FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name) EXECUTE FUNCTION brands_rename_products();--> statement-breakpoint
UPDATE products p SET brand_name = b.name FROM brands b WHERE b.id = p.brand_id;
