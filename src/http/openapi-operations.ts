/**
 * The OpenAPI document's operation ids, in one list: a generated client names its methods after
 * them (`client.createProduct(…)`), so they are verbNoun, unique and never change once published.
 * A route may set `detail.operationId` itself; otherwise its id comes from here. The list also
 * says which errors an operation answers beyond those its shape implies (see openapi-errors.ts),
 * and gives a summary to routes whose own reads poorly in a generated reference.
 */
export type OperationInfo = {
  id: string
  summary?: string
  /** error statuses its shape does not imply: 409 for a state conflict, 429 for a quota, … */
  errors?: number[]
  /** statuses its shape implies that it cannot answer */
  never?: number[]
  /** examples of file uploads, by media type (a JSON body's example comes from its schema) */
  uploads?: Record<string, string>
}

const CAMPAIGN = 'C4mPgN8sTq2WzYk6VhRbJd'
const PERFORMANCE_LINES = [
  `{"campaign_id":"${CAMPAIGN}","date":"2025-04-01","impressions":12000,"clicks":252,"spend":"88.20"}`,
  `{"campaign_id":"${CAMPAIGN}","date":"2025-04-02","impressions":11800,"clicks":240,"spend":"84.00"}`,
].join('\n')
const OFF_LINES = [
  '{"code":"4006381333931","product_name":"Organic Rolled Oats","brands":"Acme Foods","quantity":"500 g"}',
  '{"code":"9506000134352","product_name":"Crunchy Muesli","brands":"Acme Foods","quantity":"750 g"}',
].join('\n')

const ORGANIZATION = '/account/api/v1/organizations/{organization_id}'
const PRODUCT = '/products/api/v1/products/{gtin}'
const ENDPOINT = '/webhooks/api/v1/endpoints/{endpoint_id}'
const RULES = '/resolver/api/v1/organizations/{organization_id}/resolution-rules'
const ADVERTISING = '/advertising/api/v1'
const SHARES = `${ADVERTISING}/revenue-share/{organization_id}`

/** GS1 Digital Link key qualifiers, as the scan paths write them and as their ids name them. */
const QUALIFIERS: [string, string, string][] = [
  ['/22/{cpv}', 'Variant', 'its consumer product variant'],
  ['/10/{lot}', 'Lot', 'a batch or lot'],
  ['/21/{serial}', 'Serial', 'a serial number'],
]

/** `/01/{gtin}` with each combination of qualifiers, in the standard's order. */
function scanOperations(): Record<string, OperationInfo> {
  const out: Record<string, OperationInfo> = {}
  for (let mask = 0; mask < 2 ** QUALIFIERS.length; mask++) {
    const used = QUALIFIERS.filter((_, i) => mask & (2 ** i))
    const path = `/01/{gtin}${used.map(([p]) => p).join('')}`
    const names = used.map(([, n]) => n)
    const words = used.map(([, , w]) => w)
    out[`GET ${path}`] = {
      id: names.length === 0 ? 'resolveDigitalLink' : `resolveDigitalLinkWith${joinWords(names, '')}`,
      summary:
        words.length === 0
          ? 'Resolve a GTIN (GS1 Digital Link)'
          : `Resolve a GTIN with ${joinWords(words, ' ')} (GS1 Digital Link)`,
    }
  }
  return out
}

/** ['a', 'b', 'c'] -> 'a, b and c' (ids: 'aBAndC' style is avoided, names are just run together). */
function joinWords(words: string[], space: string): string {
  if (space === '') return words.length > 1 ? `${words.slice(0, -1).join('')}And${words.at(-1)}` : words[0]!
  return words.length > 1 ? `${words.slice(0, -1).join(', ')} and ${words.at(-1)}` : words[0]!
}

export const OPERATIONS: Record<string, OperationInfo> = {
  'GET /healthz': { id: 'getHealth', never: [503] },
  'GET /readyz': { id: 'getReadiness' },

  'POST /account/api/v1/organizations': { id: 'createOrganization', errors: [409] },
  [`POST ${ORGANIZATION}/api-keys`]: { id: 'createApiKey' },
  [`GET ${ORGANIZATION}/api-keys`]: { id: 'listApiKeys' },
  [`DELETE ${ORGANIZATION}/api-keys/{key_id}`]: { id: 'revokeApiKey' },
  [`GET ${ORGANIZATION}/members`]: { id: 'listMembers' },
  [`POST ${ORGANIZATION}/members`]: { id: 'addMember', errors: [409] },
  [`PATCH ${ORGANIZATION}/members/{member_id}`]: { id: 'updateMember' },
  [`DELETE ${ORGANIZATION}/members/{member_id}`]: { id: 'removeMember' },
  [`POST ${ORGANIZATION}/ownership`]: { id: 'transferOwnership', errors: [409] },

  'GET /retailers/api/v1/retailers': { id: 'listRetailers' },
  'POST /retailers/api/v1/retailers': { id: 'createRetailer' },
  'GET /retailers/api/v1/retailers/{id}': { id: 'getRetailer' },
  'PATCH /retailers/api/v1/retailers/{id}': { id: 'updateRetailer' },

  'POST /products/api/v1/products': { id: 'createProduct', errors: [409] },
  'GET /products/api/v1/products': { id: 'listProducts' },
  [`GET ${PRODUCT}`]: { id: 'getProduct' },
  [`PATCH ${PRODUCT}`]: { id: 'updateProduct', errors: [409] },
  [`DELETE ${PRODUCT}`]: { id: 'unclaimProduct' },
  [`POST ${PRODUCT}/claim`]: { id: 'claimProduct', errors: [409] },
  [`POST ${PRODUCT}/contributions`]: { id: 'contributeToProduct' },
  [`GET ${PRODUCT}/provenance`]: { id: 'getProductProvenance' },
  [`GET ${PRODUCT}/offers`]: { id: 'listProductOffers' },
  [`POST ${PRODUCT}/recall/`]: { id: 'recallProduct', errors: [409] },
  [`DELETE ${PRODUCT}/recall/`]: { id: 'endRecall', errors: [409] },
  'GET /products/recall/{gtin}': { id: 'getRecallNotice' },

  'POST /products/api/v1/barcode/': { id: 'generateBarcode' },
  'POST /products/api/v1/barcode/batch/': {
    id: 'createBarcodeBatch',
    errors: [429],
    uploads: {
      'text/csv': 'gtin,label\n4006381333931,Organic Rolled Oats 500 g\n9506000134352,Crunchy Muesli 750 g\n',
    },
  },
  'GET /products/api/v1/barcode/batch/{id}/': { id: 'getBarcodeBatch' },
  'GET /products/api/v1/barcode/batch/{id}/download': { id: 'downloadBarcodeBatch', errors: [409] },

  'GET /catalog/api/v1/search': { id: 'searchCatalog', errors: [429] },
  'POST /catalog/api/v1/search-keys': { id: 'createSearchKeys', errors: [404] },

  'POST /webhooks/api/v1/endpoints/': { id: 'createWebhookEndpoint' },
  'GET /webhooks/api/v1/endpoints/': { id: 'listWebhookEndpoints', errors: [403] },
  [`GET ${ENDPOINT}/`]: { id: 'getWebhookEndpoint', errors: [403] },
  [`PATCH ${ENDPOINT}/`]: { id: 'updateWebhookEndpoint' },
  [`DELETE ${ENDPOINT}/`]: { id: 'deleteWebhookEndpoint' },
  [`POST ${ENDPOINT}/rotate-secret/`]: { id: 'rotateWebhookSecret' },
  [`POST ${ENDPOINT}/test/`]: { id: 'testWebhookEndpoint', errors: [409] },
  [`POST ${ENDPOINT}/recover/`]: { id: 'recoverWebhookEndpoint', errors: [409] },
  'GET /webhooks/api/v1/deliveries/': { id: 'listWebhookDeliveries', errors: [403] },
  'POST /webhooks/api/v1/deliveries/{delivery_id}/retry/': { id: 'retryWebhookDelivery', errors: [409] },

  'POST /feeds/api/v1/runs': {
    id: 'createFeedRun',
    errors: [429],
    uploads: {
      'text/csv':
        'id,title,gtin,price,availability,link\nGG-10442,Organic Rolled Oats 500 g,4006381333931,2.49 EUR,in_stock,https://greengrocer.example/p/organic-rolled-oats\n',
      'text/tab-separated-values':
        'code\tproduct_name\tbrands\tquantity\n4006381333931\tOrganic Rolled Oats\tAcme Foods\t500 g\n',
      'application/x-ndjson': OFF_LINES,
      'application/jsonl': OFF_LINES,
    },
  },
  'GET /feeds/api/v1/runs': { id: 'listFeedRuns' },
  'GET /feeds/api/v1/runs/{run_id}': { id: 'getFeedRun' },

  [`GET ${RULES}`]: { id: 'listResolutionRules' },
  [`POST ${RULES}`]: { id: 'createResolutionRule' },
  [`GET ${RULES}/{rule_id}`]: { id: 'getResolutionRule' },
  [`PATCH ${RULES}/{rule_id}`]: { id: 'updateResolutionRule' },
  [`DELETE ${RULES}/{rule_id}`]: { id: 'deleteResolutionRule' },
  ...scanOperations(),
  'GET /{compressed}': { id: 'resolveCompressedDigitalLink' },
  'GET /.well-known/gs1resolver': { id: 'getResolverDescription', summary: 'Describe the resolver' },

  [`POST ${ADVERTISING}/organizations/{organization_id}/campaigns`]: { id: 'createCampaign' },
  [`GET ${ADVERTISING}/campaigns/{campaign_id}`]: { id: 'getCampaign' },
  [`PATCH ${ADVERTISING}/campaigns/{campaign_id}`]: { id: 'updateCampaign', errors: [409] },
  [`POST ${ADVERTISING}/campaigns/{campaign_id}/performance`]: { id: 'reportCampaignPerformance', errors: [409] },
  [`POST ${ADVERTISING}/performance/imports`]: {
    id: 'importPerformance',
    uploads: {
      'text/csv': `campaign_id,date,impressions,clicks,spend\n${CAMPAIGN},2025-04-01,12000,252,88.20\n${CAMPAIGN},2025-04-02,11800,240,84.00\n`,
      'application/x-ndjson': PERFORMANCE_LINES,
      'application/jsonl': PERFORMANCE_LINES,
    },
  },
  [`GET ${ADVERTISING}/performance/imports/{import_id}`]: { id: 'getPerformanceImport' },
  [`GET ${ADVERTISING}/reporting/campaigns/{campaign_id}/summary`]: { id: 'getCampaignSummary' },
  [`GET ${ADVERTISING}/reporting/organizations/{organization_id}/campaigns`]: { id: 'listCampaignSummaries' },
  [`POST ${ADVERTISING}/revenue-share/calculate`]: { id: 'calculateRevenueShares' },
  [`GET ${SHARES}`]: { id: 'listRevenueShares' },
  [`GET ${SHARES}/{share_id}`]: { id: 'getRevenueShare' },
  [`PATCH ${SHARES}/{share_id}`]: { id: 'updateRevenueShare', errors: [409] },

  'GET /demo/search': { id: 'getSearchDemo', never: [503] },
}

const VERBS: Record<string, string> = {
  get: 'get',
  post: 'create',
  put: 'replace',
  patch: 'update',
  delete: 'delete',
  options: 'describe',
  head: 'check',
}

const pascal = (word: string) =>
  word
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('')

/**
 * A readable id for a route the list does not name yet (verb from the method, noun from the last
 * word of the path): keeps the document valid for a route added without one. The list wins.
 */
export function fallbackOperationId(method: string, path: string): string {
  const words = path.split('/').filter((s) => s && !s.startsWith('{') && !/^(api|v\d+)$/.test(s))
  const collection = !path.replace(/\/$/, '').endsWith('}')
  const verb = method === 'get' && collection ? 'list' : (VERBS[method] ?? method)
  const noun = pascal(words.at(-1) ?? 'root')
  return `${verb}${noun}`
}

/** The list's entry for an operation of the OpenAPI document (`get`, `/01/{gtin}`). */
export const operationInfo = (method: string, path: string): OperationInfo | undefined =>
  OPERATIONS[`${method.toUpperCase()} ${path}`]
