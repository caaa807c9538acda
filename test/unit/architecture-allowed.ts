// The reads of another feature's tables that stay, each with why (test/architecture.test.ts checks
// that the list is exactly what the source does: a new read fails the test, and so does a stale
// entry). Everything else goes through the owning feature's functions (src/<feature>/index.ts).
export const CROSS_FEATURE_READS: Record<string, string> = {
  // search builds its documents from the rows it indexes, in set-based statements over thousands
  // of rows at once (a function call per row would undo src/search/documents.ts)
  'src/search/documents.ts products': 'set-based document builds join the catalog rows they index',
  'src/search/documents.ts brands': 'set-based document builds join the brand rows they index',
  'src/search/documents.ts retailers': 'set-based document builds join the retailer rows they index',
  'src/search/typesense/documents.ts products':
    'Typesense documents are built from the same joins as the PostgreSQL ones',
  'src/search/typesense/documents.ts brands':
    'Typesense documents are built from the same joins as the PostgreSQL ones',
  'src/search/typesense/documents.ts retailers':
    'Typesense documents are built from the same joins as the PostgreSQL ones',
  'src/search/rows.ts products': 'search result rows are read in the one prepared statement that ranks them',
  'src/search/rows.ts brands': 'search result rows are read in the one prepared statement that ranks them',
  'src/search/rows.ts retailers': 'search result rows are read in the one prepared statement that ranks them',
  'src/search/postgres.ts products':
    'the ranking statement filters products by their allergen and certification columns',
  'src/search/marks.ts products': 'the drain marks what changed since a time by scanning products.modified in SQL',
  // the resolver answers scans from memory and loads products in one prepared statement
  'src/resolver/rule-index.ts products':
    'the scan path loads a product once into the in-memory index with a prepared statement (bench:resolve)',
  'src/resolver/rules.ts products':
    "a PRODUCT rule's scope is checked in the rule's own transaction (still to move to catalog)",
  'src/resolver/rules.ts brands':
    "a BRAND rule's scope is checked in the rule's own transaction (still to move to catalog)",
  // feeds write a retailer's offers and record its runs: the ingest path (helper G's) reads them set-based
  'src/feeds/runs.ts retailers':
    'a run names its retailer; read with the run in one statement (still to move to retailers)',
  'src/feeds/chunks.ts retailers':
    "a chunk reads its run's retailer once for all its offers (still to move to retailers)",
  'src/feeds/scheduled.ts retailers':
    'a scheduled entry names its retailer by id; checked when the schedule fires (still to move)',
  'src/feeds/scheduled.ts organizations':
    'a scheduled entry names its organization; checked when it fires (still to move to accounts)',
  'src/catalog/verification.ts organizations':
    "the prefix signal reads the claimant's GS1 prefixes in the claim's transaction (still to move to accounts)",
  'src/catalog/brands.ts organizations':
    "a brand's verification reads its organization's prefixes (still to move to accounts)",
  'src/catalog/prefixes.ts gs1_company_prefixes':
    'prefix ownership is locked and written with the products it disputes, in one transaction',
  'src/advertising/revenue-shares.ts retailers':
    "the monthly settlement joins every retailer's spend in one statement, one row per retailer",
  'src/observability/collectors.ts feed_run_chunks': 'the metrics endpoint counts rows of every feature in one scrape',
  'src/observability/collectors.ts webhook_endpoints':
    'the metrics endpoint counts rows of every feature in one scrape',
}
