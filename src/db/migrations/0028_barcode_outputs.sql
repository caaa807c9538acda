ALTER TABLE "barcode_batches" ADD COLUMN "output_store" varchar(16);--> statement-breakpoint
ALTER TABLE "barcode_batches" ADD COLUMN "output_bytes" bigint;--> statement-breakpoint
UPDATE "barcode_batches" SET "output_store" = 'directory' WHERE "file_path" IS NOT NULL;--> statement-breakpoint
CREATE TABLE "barcode_outputs" (
	"batch_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"bytes" "bytea" NOT NULL,
	CONSTRAINT "barcode_outputs_batch_id_seq_pk" PRIMARY KEY("batch_id","seq")
);
--> statement-breakpoint
-- zip and PDF outputs are compressed already: kept out of line without a second compression
ALTER TABLE "barcode_outputs" ALTER COLUMN "bytes" SET STORAGE EXTERNAL;--> statement-breakpoint
ALTER TABLE "barcode_outputs" ADD CONSTRAINT "barcode_outputs_batch_id_barcode_batches_id_fk" FOREIGN KEY ("batch_id") REFERENCES "public"."barcode_batches"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
-- The exact number of products without counting a million rows on every list page: each statement
-- that inserts or deletes products adds its count as a row here (statement triggers with transition
-- tables, so concurrent writers never wait on one counter row); the total is the sum, read in the
-- list's own snapshot. Rows are folded into one now and then, skipping rows another fold holds.
CREATE TABLE "product_count_deltas" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"delta" bigint NOT NULL
);
--> statement-breakpoint
INSERT INTO "product_count_deltas" ("delta") SELECT count(*) FROM "products";--> statement-breakpoint
CREATE FUNCTION "product_count_track"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	added bigint;
	n bigint;
BEGIN
	IF TG_OP = 'TRUNCATE' THEN
		DELETE FROM product_count_deltas;
		RETURN NULL;
	ELSIF TG_OP = 'INSERT' THEN
		SELECT count(*) INTO n FROM new_rows;
	ELSE
		SELECT -count(*) INTO n FROM old_rows;
	END IF;
	IF n = 0 THEN RETURN NULL; END IF;
	INSERT INTO product_count_deltas (delta) VALUES (n) RETURNING id INTO added;
	IF added % 64 = 0 THEN
		WITH folded AS (
			DELETE FROM product_count_deltas WHERE id IN (SELECT id FROM product_count_deltas FOR UPDATE SKIP LOCKED)
			RETURNING delta
		)
		INSERT INTO product_count_deltas (delta) SELECT sum(delta) FROM folded HAVING count(*) > 0;
	END IF;
	RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "products_count_inserted" AFTER INSERT ON "products" REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION "product_count_track"();--> statement-breakpoint
CREATE TRIGGER "products_count_deleted" AFTER DELETE ON "products" REFERENCING OLD TABLE AS old_rows
	FOR EACH STATEMENT EXECUTE FUNCTION "product_count_track"();--> statement-breakpoint
CREATE TRIGGER "products_count_truncated" AFTER TRUNCATE ON "products"
	FOR EACH STATEMENT EXECUTE FUNCTION "product_count_track"();
