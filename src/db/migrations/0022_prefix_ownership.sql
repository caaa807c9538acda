-- A GS1 company prefix belongs to one organization (issue 44, finding 3). Organizations keep the
-- prefixes they were registered with (gs1_company_prefixes, the resource's field); this table is
-- who holds each one, so that "which organization holds the longest prefix of this GTIN" is one
-- index lookup. Overlaps (one prefix a prefix of another) between organizations are refused when
-- a prefix is registered; rows from before this migration may still overlap (longest match wins).
-- Idempotent: test/security/prefix.test.ts replays it on a database that already has it.
CREATE TABLE IF NOT EXISTS "gs1_company_prefixes" (
	"prefix" varchar(12) PRIMARY KEY NOT NULL,
	"organization_id" uuid NOT NULL REFERENCES "public"."organizations"("id") ON DELETE cascade,
	"created" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "gs1_company_prefixes_organization_idx" ON "gs1_company_prefixes" USING btree ("organization_id");
--> statement-breakpoint
-- the registrations so far; a prefix two organizations were both given goes to the earlier one
INSERT INTO "gs1_company_prefixes" ("prefix", "organization_id", "created")
SELECT DISTINCT ON (p.prefix) p.prefix, o.id, o.created
FROM "organizations" o, unnest(o.gs1_company_prefixes) AS p(prefix)
WHERE p.prefix ~ '^[0-9]{4,12}$'
ORDER BY p.prefix, o.created, o.id
ON CONFLICT DO NOTHING;
--> statement-breakpoint
-- claims made by another organization under a registered prefix (the longest matching one decides,
-- compared on the GTIN-13 form) are disputed: the resolver withholds their links, and the prefix's
-- holder can claim the product (it takes it over)
UPDATE "products" p SET "claim_verification_status" = 'disputed', "modified" = now()
FROM (
	SELECT pr.id, (
		SELECT g.organization_id FROM "gs1_company_prefixes" g
		WHERE g.prefix IN (SELECT left(substr(pr.gtin, 2), n) FROM generate_series(4, 12) AS n)
		ORDER BY length(g.prefix) DESC LIMIT 1
	) AS holder
	FROM "products" pr WHERE pr.owner_id IS NOT NULL
) h
WHERE p.id = h.id AND h.holder IS NOT NULL AND h.holder <> p.owner_id
	AND p.claim_verification_status IS DISTINCT FROM 'disputed';
