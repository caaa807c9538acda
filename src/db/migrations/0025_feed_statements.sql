-- A source's statement of a product is keyed by (product, source, contributor, scope): `scope` is
-- the feed it came from (its retailer for an affiliate feed, the nil UUID for another source's
-- feed), NULL for a statement made through the API (a contribution). Two feeds of one organization
-- for two retailers keep one statement each instead of replacing each other's (issue 45).
ALTER TABLE "product_candidates" ADD COLUMN "scope" uuid;--> statement-breakpoint
-- Earlier statements of a feed take the feed's scope: the one feed of the runner that says the
-- product (several: the first retailer's, as the statement was the last of them anyway).
UPDATE "product_candidates" c SET "scope" = f.scope
  FROM (SELECT DISTINCT ON (product_id, source, contributor_id) product_id, source, contributor_id, scope
        FROM "feed_records" ORDER BY product_id, source, contributor_id, scope) f
  WHERE c.product_id = f.product_id
    AND (c.source = f.source OR (c.source = 'crowd_sourced' AND c.contributor_id = f.contributor_id))
    AND (c.source = 'crowd_sourced' OR f.contributor_id = '00000000-0000-0000-0000-000000000000');
