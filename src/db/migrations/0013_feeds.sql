CREATE TABLE "feed_records" (
	"source" "data_source" NOT NULL,
	"scope" uuid NOT NULL,
	"key" varchar(255) NOT NULL,
	"gtin" char(14) NOT NULL,
	"product_id" uuid NOT NULL,
	"content_hash" varchar(32) NOT NULL,
	"version" bigint DEFAULT 0 NOT NULL,
	"reading" varchar(32) NOT NULL,
	"last_run_id" uuid NOT NULL,
	"full_run_id" uuid,
	CONSTRAINT "feed_records_source_scope_key_pk" PRIMARY KEY("source","scope","key")
);
--> statement-breakpoint
CREATE TABLE "feed_run_chunks" (
	"run_id" uuid NOT NULL,
	"chunk" integer NOT NULL,
	"status" varchar(16) DEFAULT 'queued' NOT NULL,
	"payload" jsonb,
	"read" integer DEFAULT 0 NOT NULL,
	"created" integer DEFAULT 0 NOT NULL,
	"updated" integer DEFAULT 0 NOT NULL,
	"unchanged" integer DEFAULT 0 NOT NULL,
	"rejected" integer DEFAULT 0 NOT NULL,
	"readings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"rejected_sample" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "feed_run_chunks_run_id_chunk_pk" PRIMARY KEY("run_id","chunk")
);
--> statement-breakpoint
CREATE TABLE "feed_runs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid,
	"source" varchar(16) NOT NULL,
	"format" varchar(16) NOT NULL,
	"file" varchar(1024) NOT NULL,
	"path" varchar(4096),
	"retailer_id" uuid,
	"full" boolean DEFAULT false NOT NULL,
	"options" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" varchar(16) DEFAULT 'queued' NOT NULL,
	"chunks_total" integer,
	"bytes_total" bigint,
	"bytes_read" bigint DEFAULT 0 NOT NULL,
	"disappeared_count" integer,
	"disappeared_sample" jsonb,
	"error" text,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "feed_uploads" (
	"run_id" uuid PRIMARY KEY NOT NULL,
	"content" "bytea" NOT NULL
);
--> statement-breakpoint
CREATE TABLE "offers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"retailer_id" uuid NOT NULL,
	"product_id" uuid NOT NULL,
	"item_id" varchar(255) NOT NULL,
	"title" text DEFAULT '' NOT NULL,
	"price" numeric(16, 4) NOT NULL,
	"regular_price" numeric(16, 4) NOT NULL,
	"currency" char(3) NOT NULL,
	"url" varchar(2048) NOT NULL,
	"availability" varchar(16) NOT NULL,
	"multipack" integer,
	"observed_at" timestamp with time zone NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"modified" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "offers_retailer_item_key" UNIQUE("retailer_id","item_id")
);
--> statement-breakpoint
ALTER TABLE "feed_records" ADD CONSTRAINT "feed_records_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feed_run_chunks" ADD CONSTRAINT "feed_run_chunks_run_id_feed_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."feed_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feed_runs" ADD CONSTRAINT "feed_runs_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feed_runs" ADD CONSTRAINT "feed_runs_retailer_id_retailers_id_fk" FOREIGN KEY ("retailer_id") REFERENCES "public"."retailers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feed_uploads" ADD CONSTRAINT "feed_uploads_run_id_feed_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."feed_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "offers" ADD CONSTRAINT "offers_retailer_id_retailers_id_fk" FOREIGN KEY ("retailer_id") REFERENCES "public"."retailers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "offers" ADD CONSTRAINT "offers_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "feed_records_full_run_idx" ON "feed_records" USING btree ("source","scope","full_run_id");--> statement-breakpoint
CREATE INDEX "feed_runs_organization_created_idx" ON "feed_runs" USING btree ("organization_id","created");--> statement-breakpoint
CREATE INDEX "offers_product_idx" ON "offers" USING btree ("product_id","retailer_id");