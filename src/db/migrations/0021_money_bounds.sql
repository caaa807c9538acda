-- A retailer's month adds up the spend of every tenant's campaigns on it, and nothing bounds how
-- many campaigns there are: each campaign's lifetime spend is capped (10^14 USD, campaign_totals),
-- their sum is not. numeric(20,2) overflowed past 10^18 USD (10,001 campaigns at the cap), so one
-- tenant could keep another organization's retailer from its share (issue 44, finding 4). An
-- unconstrained numeric holds 131,072 whole digits: no accepted input reaches that. Amounts stay in
-- cents because the calculation rounds them half-even to 2 decimals before writing. Dropping the
-- precision of a numeric column rewrites no rows.
ALTER TABLE "revenue_shares" ALTER COLUMN "gross_revenue" SET DATA TYPE numeric;--> statement-breakpoint
ALTER TABLE "revenue_shares" ALTER COLUMN "platform_fee" SET DATA TYPE numeric;--> statement-breakpoint
ALTER TABLE "revenue_shares" ALTER COLUMN "retailer_share" SET DATA TYPE numeric;
