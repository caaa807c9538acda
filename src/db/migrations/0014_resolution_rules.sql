CREATE TABLE "resolution_rules" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"scope_type" varchar(12) NOT NULL,
	"scope_id" varchar(64) NOT NULL,
	"product_id" uuid,
	"order_index" integer DEFAULT 0 NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"absolute_start_at" timestamp with time zone,
	"absolute_end_at" timestamp with time zone,
	"annual_start_mmdd" varchar(5),
	"annual_end_mmdd" varchar(5),
	"days_of_week" smallint[] DEFAULT '{}'::smallint[] NOT NULL,
	"time_of_day_start" varchar(5),
	"time_of_day_end" varchar(5),
	"timezone" varchar(64) DEFAULT 'UTC' NOT NULL,
	"link_type" varchar(100) DEFAULT 'gs1:defaultLink' NOT NULL,
	"location_countries" text[] DEFAULT '{}'::text[] NOT NULL,
	"location_regions" text[] DEFAULT '{}'::text[] NOT NULL,
	"location_cities" text[] DEFAULT '{}'::text[] NOT NULL,
	"custom_url" varchar(2048) NOT NULL,
	"section_anchor" varchar(255) DEFAULT '' NOT NULL,
	"title" varchar(255) DEFAULT '' NOT NULL,
	"media_type" varchar(100) DEFAULT 'text/html' NOT NULL,
	"hreflang" text[] DEFAULT '{}'::text[] NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"modified" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "resolution_rules" ADD CONSTRAINT "resolution_rules_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "resolution_rules" ADD CONSTRAINT "resolution_rules_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "resolution_rules_organization_idx" ON "resolution_rules" USING btree ("organization_id","scope_type","created","id");--> statement-breakpoint
CREATE INDEX "resolution_rules_product_idx" ON "resolution_rules" USING btree ("product_id");