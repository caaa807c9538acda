CREATE TYPE "public"."claim_verification_status" AS ENUM('unverified', 'prefix_matched', 'verified', 'disputed', 'rejected');--> statement-breakpoint
CREATE TYPE "public"."data_source" AS ENUM('crowd_sourced', 'claimed', 'imported', 'ai_extracted', 'brand_site_crawl', 'gtin1_authoritative', 'external_api', 'open_food_facts', 'usda_fdc', 'fda_ndc', 'affiliate_feed', 'datakick', 'common_crawl_wdc');--> statement-breakpoint
CREATE TABLE "brands" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" varchar(255) NOT NULL,
	"organization_id" uuid,
	"created" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "product_candidates" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"product_id" uuid NOT NULL,
	"field" varchar(64) NOT NULL,
	"value" jsonb NOT NULL,
	"source" "data_source" NOT NULL,
	"confidence" real NOT NULL,
	"contributor_id" uuid,
	"created" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "products" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"gtin" char(14) NOT NULL,
	"product_name" varchar(255) DEFAULT '' NOT NULL,
	"brand_id" uuid,
	"manufacturer" varchar(255) DEFAULT '' NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"image_url" varchar(2048) DEFAULT '' NOT NULL,
	"country_of_origin" varchar(2) DEFAULT '' NOT NULL,
	"net_content" varchar(100) DEFAULT '' NOT NULL,
	"net_content_value" double precision,
	"net_content_uom" varchar(3),
	"owner_id" uuid,
	"claim_verification_status" "claim_verification_status",
	"length" double precision,
	"width" double precision,
	"height" double precision,
	"depth" double precision,
	"length_uom" varchar(10) DEFAULT '' NOT NULL,
	"width_uom" varchar(10) DEFAULT '' NOT NULL,
	"height_uom" varchar(10) DEFAULT '' NOT NULL,
	"depth_uom" varchar(10) DEFAULT '' NOT NULL,
	"gross_weight" double precision,
	"net_weight" double precision,
	"gross_weight_uom" varchar(10) DEFAULT '' NOT NULL,
	"net_weight_uom" varchar(10) DEFAULT '' NOT NULL,
	"gpc_brick_code" varchar(8) DEFAULT '' NOT NULL,
	"gpc_class_code" varchar(8) DEFAULT '' NOT NULL,
	"gpc_family_code" varchar(8) DEFAULT '' NOT NULL,
	"gpc_segment_code" varchar(8) DEFAULT '' NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"data_source" "data_source" DEFAULT 'claimed' NOT NULL,
	"confidence_score" real DEFAULT 0 NOT NULL,
	"field_confidence" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"ingredients_text" text DEFAULT '' NOT NULL,
	"usage_instructions" text DEFAULT '' NOT NULL,
	"contains_allergens" text[] DEFAULT '{}'::text[] NOT NULL,
	"may_contain_allergens" text[] DEFAULT '{}'::text[] NOT NULL,
	"certifications" text[] DEFAULT '{}'::text[] NOT NULL,
	"substances" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"modified" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "products_gtin_unique" UNIQUE("gtin")
);
--> statement-breakpoint
ALTER TABLE "brands" ADD CONSTRAINT "brands_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "product_candidates" ADD CONSTRAINT "product_candidates_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "products" ADD CONSTRAINT "products_brand_id_brands_id_fk" FOREIGN KEY ("brand_id") REFERENCES "public"."brands"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "products" ADD CONSTRAINT "products_owner_id_organizations_id_fk" FOREIGN KEY ("owner_id") REFERENCES "public"."organizations"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "brands_organization_name_key" ON "brands" USING btree ("organization_id",lower("name")) WHERE "brands"."organization_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "brands_unowned_name_key" ON "brands" USING btree (lower("name")) WHERE "brands"."organization_id" is null;--> statement-breakpoint
CREATE INDEX "product_candidates_product_field_idx" ON "product_candidates" USING btree ("product_id","field","created");--> statement-breakpoint
CREATE INDEX "products_owner_gtin_idx" ON "products" USING btree ("owner_id","gtin");--> statement-breakpoint
CREATE INDEX "products_allergens_idx" ON "products" USING gin ("contains_allergens");