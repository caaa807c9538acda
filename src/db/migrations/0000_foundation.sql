CREATE TYPE "public"."api_key_role" AS ENUM('manager', 'editor', 'readonly');--> statement-breakpoint
CREATE TYPE "public"."member_role" AS ENUM('owner', 'manager', 'editor', 'billing', 'viewer');--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"name" varchar(255) NOT NULL,
	"description" varchar(255) DEFAULT '' NOT NULL,
	"role" "api_key_role" DEFAULT 'readonly' NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"key_prefix" varchar(8) NOT NULL,
	"key_hash" varchar(64) NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_keyHash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "members" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"user_email" varchar(320) NOT NULL,
	"user_name" varchar(255) DEFAULT '' NOT NULL,
	"user_metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"role" "member_role" NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "organizations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" varchar(255) NOT NULL,
	"gs1_company_prefixes" text[] DEFAULT '{}'::text[] NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"event_type" varchar(100) NOT NULL,
	"organization_id" uuid,
	"data" jsonb NOT NULL,
	"subject_id" uuid NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "retailers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organization_id" uuid NOT NULL,
	"name" varchar(255) NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"is_online" boolean DEFAULT false NOT NULL,
	"is_physical" boolean DEFAULT false NOT NULL,
	"website" varchar(2048) DEFAULT '' NOT NULL,
	"gln" varchar(13) DEFAULT '' NOT NULL,
	"is_canonical" boolean DEFAULT false NOT NULL,
	"marketplace_regions" text[] DEFAULT '{}'::text[] NOT NULL,
	"category" varchar(255) DEFAULT '' NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"created" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "members" ADD CONSTRAINT "members_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "retailers" ADD CONSTRAINT "retailers_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_organization_created_idx" ON "api_keys" USING btree ("organization_id","created","id");--> statement-breakpoint
CREATE UNIQUE INDEX "members_organization_email_key" ON "members" USING btree ("organization_id",lower("user_email"));--> statement-breakpoint
CREATE INDEX "members_organization_created_idx" ON "members" USING btree ("organization_id","created","id");--> statement-breakpoint
CREATE INDEX "events_created_idx" ON "events" USING btree ("created","id");--> statement-breakpoint
CREATE INDEX "events_subject_idx" ON "events" USING btree ("subject_id");--> statement-breakpoint
CREATE INDEX "retailers_organization_name_idx" ON "retailers" USING btree ("organization_id",lower("name"),"id");--> statement-breakpoint
CREATE INDEX "retailers_canonical_name_idx" ON "retailers" USING btree (lower("name"),"id") WHERE "retailers"."is_canonical";