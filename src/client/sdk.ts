import type {
  BarcodeBatch,
  BarcodeBatchCreate,
  FeedRun,
  FeedRunCreate,
  FeedRunListQuery,
  FeedRunUploadQuery,
  Product,
  ProductCreate,
  ProductListQuery,
  ProductUpdate,
  Retailer,
  RetailerCreate,
  RetailerListQuery,
  RetailerUpdate,
  SearchQuery,
  SearchResults,
  WebhookDelivery,
  WebhookDeliveryListQuery,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointListQuery,
  WebhookEndpointUpdate,
} from './resources'
import { type Query, type Request, type SdkOptions, transport } from './transport'

export { ApiError, type SdkOptions } from './transport'

/** One page of a list (contract: the spec's envelope). */
export type Page<T> = {
  data: T[]
  pagination: {
    page: number
    page_size: number
    total_count: number
    total_pages: number
    has_next: boolean
    has_previous: boolean
  }
}

/**
 * A list's pages, fetched one at a time as they are iterated (`for await (const page of …)`),
 * from the query's `page` (default 1) until the last; `items()` walks the rows of every page.
 */
export class Pages<T> implements AsyncIterable<Page<T>> {
  constructor(
    private readonly fetchPage: (page: number) => Promise<Page<T>>,
    private readonly from = 1,
  ) {}

  async *[Symbol.asyncIterator](): AsyncIterator<Page<T>> {
    for (let page = this.from; ; page++) {
      const got = await this.fetchPage(page)
      yield got
      if (!got.pagination.has_next) return
    }
  }

  async *items(): AsyncIterable<T> {
    for await (const page of this) yield* page.data
  }

  /** The first page alone. */
  first(): Promise<Page<T>> {
    return this.fetchPage(this.from)
  }
}

const enc = encodeURIComponent

/** A list route as pages: the query's own `page` is where iteration starts. */
function pages<T>(request: Request, path: string, query: Query & { page?: number } = {}) {
  return new Pages<T>((page) => request<Page<T>>('GET', path, { query: { ...query, page } }), query.page ?? 1)
}

/**
 * The service as named methods (`sdk.catalog.products.retrieve(gtin)`), over plain fetch: typed by
 * src/client/resources.ts, generated from the OpenAPI document, so a caller type-checks in seconds
 * and bundles no server code. Errors are thrown as ApiError (status and problem details); 429 and
 * 503 are retried after their Retry-After (transport.ts). The Eden client (`createClient`) remains
 * for every route this layer does not name.
 *
 * ```ts
 * const sdk = createSdk({ baseUrl: 'http://localhost:3000', apiKey })
 * const product = await sdk.catalog.products.retrieve('4006381333931')
 * for await (const page of sdk.catalog.products.list({ claimed: 'true' })) console.log(page.data.length)
 * ```
 */
export function createSdk(options: SdkOptions) {
  const request = transport(options)
  const P = '/products/api/v1/products'
  const E = '/webhooks/api/v1/endpoints'
  const B = '/products/api/v1/barcode/batch'
  const R = '/retailers/api/v1/retailers'
  return {
    catalog: {
      products: {
        retrieve: (gtin: string) => request<Product>('GET', `${P}/${enc(gtin)}`),
        list: (query: ProductListQuery = {}) => pages<Product>(request, P, query),
        create: (body: ProductCreate) => request<Product>('POST', P, { json: body }),
        update: (gtin: string, body: ProductUpdate) => request<Product>('PATCH', `${P}/${enc(gtin)}`, { json: body }),
        claim: (gtin: string) => request<Product>('POST', `${P}/${enc(gtin)}/claim`, { json: {} }),
        unclaim: (gtin: string) => request<Product>('DELETE', `${P}/${enc(gtin)}`),
      },
      search: (query: SearchQuery) => request<SearchResults>('GET', '/catalog/api/v1/search', { query }),
    },
    retailers: {
      retrieve: (id: string) => request<Retailer>('GET', `${R}/${enc(id)}`),
      list: (query: RetailerListQuery = {}) => pages<Retailer>(request, R, query),
      create: (body: RetailerCreate) => request<Retailer>('POST', R, { json: body }),
      update: (id: string, body: RetailerUpdate) => request<Retailer>('PATCH', `${R}/${enc(id)}`, { json: body }),
    },
    webhooks: {
      endpoints: {
        create: (body: WebhookEndpointCreate) => request<WebhookEndpoint>('POST', `${E}/`, { json: body }),
        list: (query: WebhookEndpointListQuery = {}) => pages<WebhookEndpoint>(request, `${E}/`, query),
        retrieve: (id: string) => request<WebhookEndpoint>('GET', `${E}/${enc(id)}/`),
        update: (id: string, body: WebhookEndpointUpdate) =>
          request<WebhookEndpoint>('PATCH', `${E}/${enc(id)}/`, { json: body }),
        delete: (id: string) => request<void>('DELETE', `${E}/${enc(id)}/`),
        rotateSecret: (id: string) => request<WebhookEndpoint>('POST', `${E}/${enc(id)}/rotate-secret/`, { json: {} }),
        test: (id: string) => request<WebhookEndpoint>('POST', `${E}/${enc(id)}/test/`, { json: {} }),
      },
      deliveries: {
        list: (query: WebhookDeliveryListQuery = {}) =>
          pages<WebhookDelivery>(request, '/webhooks/api/v1/deliveries/', query),
      },
    },
    feeds: {
      runs: {
        /** A run of a file on the server (`{source, path}`), or of an upload: `upload(file, query)`. */
        create: (body: FeedRunCreate) => request<FeedRun>('POST', '/feeds/api/v1/runs', { json: body }),
        upload: (file: Blob | string, query: FeedRunUploadQuery, contentType = 'text/csv') =>
          request<FeedRun>('POST', '/feeds/api/v1/runs', { body: file, contentType, query }),
        list: (query: FeedRunListQuery = {}) => pages<FeedRun>(request, '/feeds/api/v1/runs', query),
        retrieve: (id: string) => request<FeedRun>('GET', `/feeds/api/v1/runs/${enc(id)}`),
      },
    },
    barcodes: {
      batches: {
        create: (body: BarcodeBatchCreate) => request<BarcodeBatch>('POST', `${B}/`, { json: body }),
        retrieve: (id: string) => request<BarcodeBatch>('GET', `${B}/${enc(id)}/`),
        /** The label sheet (PDF) or zip, once the batch has succeeded. */
        download: (id: string) => request<Blob>('GET', `${B}/${enc(id)}/download`, { blob: true }),
      },
    },
  }
}

export type Sdk = ReturnType<typeof createSdk>
