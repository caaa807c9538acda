-- Uploads are stored in parts of 1 MiB (written and read one at a time, never held whole):
-- an existing upload is its part 1.
ALTER TABLE "feed_uploads" ADD COLUMN "part" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "feed_uploads" DROP CONSTRAINT "feed_uploads_pkey";--> statement-breakpoint
ALTER TABLE "feed_uploads" ADD CONSTRAINT "feed_uploads_run_id_part_pk" PRIMARY KEY("run_id","part");--> statement-breakpoint
ALTER TABLE "performance_uploads" ADD COLUMN "part" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "performance_uploads" DROP CONSTRAINT "performance_uploads_pkey";--> statement-breakpoint
ALTER TABLE "performance_uploads" ADD CONSTRAINT "performance_uploads_import_id_part_pk" PRIMARY KEY("import_id","part");
