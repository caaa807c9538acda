CREATE TABLE "campaign_performance" (
	"campaign_id" uuid NOT NULL,
	"date" date NOT NULL,
	"source" varchar(64) NOT NULL,
	"impressions" bigint DEFAULT 0 NOT NULL,
	"clicks" bigint DEFAULT 0 NOT NULL,
	"spend" numeric(20, 6) NOT NULL,
	"modified" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "campaign_performance_campaign_id_date_source_pk" PRIMARY KEY("campaign_id","date","source")
);
--> statement-breakpoint
CREATE TABLE "campaign_totals" (
	"campaign_id" uuid PRIMARY KEY NOT NULL,
	"impressions" bigint DEFAULT 0 NOT NULL,
	"clicks" bigint DEFAULT 0 NOT NULL,
	"spend" numeric(20, 6) DEFAULT '0' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "campaigns" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"retailer_id" uuid NOT NULL,
	"name" varchar(255) NOT NULL,
	"status" varchar(16) DEFAULT 'draft' NOT NULL,
	"budget" numeric(20, 6) NOT NULL,
	"pricing_model" varchar(3) NOT NULL,
	"rate" numeric(20, 6) NOT NULL,
	"start_date" date,
	"end_date" date,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"modified" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "performance_imports" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"format" varchar(8) NOT NULL,
	"file_name" varchar(255) NOT NULL,
	"source" varchar(64) NOT NULL,
	"status" varchar(16) DEFAULT 'queued' NOT NULL,
	"total" integer,
	"chunks_done" integer DEFAULT 0 NOT NULL,
	"processed" integer DEFAULT 0 NOT NULL,
	"created_rows" integer DEFAULT 0 NOT NULL,
	"updated_rows" integer DEFAULT 0 NOT NULL,
	"unchanged_rows" integer DEFAULT 0 NOT NULL,
	"rejected_rows" integer DEFAULT 0 NOT NULL,
	"rejected_sample" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"error" text,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "performance_uploads" (
	"import_id" uuid PRIMARY KEY NOT NULL,
	"content" "bytea" NOT NULL
);
--> statement-breakpoint
CREATE TABLE "revenue_shares" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"retailer_id" uuid NOT NULL,
	"period_start" date NOT NULL,
	"period_end" date NOT NULL,
	"gross_revenue" numeric(20, 2) NOT NULL,
	"platform_fee" numeric(20, 2) NOT NULL,
	"retailer_share" numeric(20, 2) NOT NULL,
	"platform_fee_rate" numeric(5, 4) NOT NULL,
	"status" varchar(16) DEFAULT 'CALCULATED' NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"paid_at" timestamp with time zone,
	"payment_transfer_id" varchar(255) DEFAULT '' NOT NULL,
	"calculated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"modified" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "revenue_shares_retailer_period_key" UNIQUE("retailer_id","period_start")
);
--> statement-breakpoint
ALTER TABLE "campaign_performance" ADD CONSTRAINT "campaign_performance_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign_totals" ADD CONSTRAINT "campaign_totals_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_retailer_id_retailers_id_fk" FOREIGN KEY ("retailer_id") REFERENCES "public"."retailers"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "performance_imports" ADD CONSTRAINT "performance_imports_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "performance_uploads" ADD CONSTRAINT "performance_uploads_import_id_performance_imports_id_fk" FOREIGN KEY ("import_id") REFERENCES "public"."performance_imports"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "revenue_shares" ADD CONSTRAINT "revenue_shares_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "revenue_shares" ADD CONSTRAINT "revenue_shares_retailer_id_retailers_id_fk" FOREIGN KEY ("retailer_id") REFERENCES "public"."retailers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "campaigns_organization_idx" ON "campaigns" USING btree ("organization_id","created","id");--> statement-breakpoint
CREATE INDEX "campaigns_retailer_idx" ON "campaigns" USING btree ("retailer_id");--> statement-breakpoint
CREATE INDEX "performance_imports_organization_idx" ON "performance_imports" USING btree ("organization_id","created");--> statement-breakpoint
CREATE INDEX "revenue_shares_organization_idx" ON "revenue_shares" USING btree ("organization_id","period_start");--> statement-breakpoint
-- n / d rounded half-even (banker's rounding) to `scale` decimals, exactly: integer quotient and
-- remainder of numerics, no binary float and no truncated quotient. 0 when d is 0. For n, d >= 0.
-- One expression without FROM and not STRICT, so the planner inlines it (and folds 10^scale for a
-- constant scale): a call costs as much as its arithmetic.
CREATE OR REPLACE FUNCTION ratio_half_even(n numeric, d numeric, scale integer) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN d = 0 THEN 0::numeric ELSE
    round((div(n * power(10::numeric, scale), d)
           + CASE WHEN 2 * mod(n * power(10::numeric, scale), d) > d
                    OR (2 * mod(n * power(10::numeric, scale), d) = d
                        AND mod(div(n * power(10::numeric, scale), d), 2) = 1)
                  THEN 1 ELSE 0 END)
          / power(10::numeric, scale), scale)
  END
$$;
