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
