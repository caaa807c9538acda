import { Elysia } from 'elysia'
import { substanceSlug } from '../catalog/ingredients/analyze'
import { config } from '../config'
import { db } from '../db/client'
import { auth } from '../http/auth'
import { clientAddress, limitKey } from '../http/client-ip'
import { errorResponses } from '../http/openapi'
import { consume, rateLimitHeaders } from '../http/rate-limit'
import { SearchKeyRequest, SearchKeys, SearchQuery, SearchResponse } from './schemas'
import { search } from './search'
import { COLLECTIONS } from './types'
import { mintSearchKeys } from './typesense/scoped-keys'

const ANONYMOUS = {
  name: 'search-anonymous',
  points: config.SEARCH_ANONYMOUS_PER_MINUTE,
  seconds: 60,
  what: 'anonymous searches',
}

type FilterInput = { exclude_allergens?: string[]; certifications?: string[]; exclude_substances?: string[] }

/** The catalog filters of a search or a scoped key, substance aliases resolved to their slugs. */
const filtersOf = (input: FilterInput) => ({
  excludeAllergens: input.exclude_allergens ?? [],
  certifications: input.certifications ?? [],
  excludeSubstances: (input.exclude_substances ?? []).map((s) => substanceSlug(s) ?? s),
})

export const searchRoutes = new Elysia({ name: 'search', prefix: '/catalog/api/v1' })
  .use(auth)
  .get(
    '/search',
    async ({ query, caller, request, server, headers, set }) => {
      if (!caller) {
        const address = clientAddress(server?.requestIP(request)?.address, headers['x-forwarded-for'])
        const state = await consume(ANONYMOUS, address ? limitKey(address) : 'unknown')
        if (state) Object.assign(set.headers, rateLimitHeaders(state))
      }
      const results = await search(db, {
        q: query.q,
        types: query.type?.length ? [...new Set(query.type)] : [...COLLECTIONS],
        limit: Math.min(query.limit ?? 20, 100),
        ...filtersOf(query),
        organizationId: caller?.organizationId ?? null,
      })
      return { query: query.q, total_count: results.length, results }
    },
    {
      optionalAuth: true,
      query: SearchQuery,
      response: { 200: SearchResponse, ...errorResponses },
      detail: {
        tags: ['Search'],
        summary: 'Search the catalog',
        description: [
          'Products (name, brand, description, manufacturer, ingredients, GTIN), brands and retailers, ranked together by relevance, sorted by `rank` descending and cut to `limit` (default 20, at most 100); no pagination, and `total_count` is the number of rows returned. Rows of equal rank keep the order they were found in (products before brands before retailers; products in storage order, brands and retailers by id), so a smaller `limit` gives the first rows of a larger one.',
          'Syntax: words (all must match), "quoted phrases", `-word` or `-"phrase"` to exclude, `OR` between two terms. The last word also matches as a prefix while it is typed (`choc` finds chocolate). A query of only punctuation or only exclusions returns no rows.',
          'Tiers, each only when the ones before found nothing: a GTIN in any form (8-14 digits, separators, UPC-E) is looked up exactly and ranked 1, above any text match; full text; then case- and accent-insensitive substring matching (a term of at least 3 characters is needed); then typo-tolerant trigram similarity (`choclate` finds chocolate), never for digit-only queries. Each row names its tier in `match`.',
          'Filters: `exclude_allergens`, `certifications` (all required; brand and retailer rows pass through), `exclude_substances` (a match of confidence >= 0.8 drops the product; weaker ones are reported in `substance_flags`). Retailers: the canonical directory, plus the caller’s own with a key.',
          `Anonymous: at most ${config.SEARCH_ANONYMOUS_PER_MINUTE} requests a minute per address (IPv6: per /64), shared by every API process; past it 429 \`rate_limited\` with Retry-After. Anonymous responses carry RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset. With a valid API key the anonymous limit does not apply; an invalid key is 401. The address is the socket's; X-Forwarded-For counts only under TRUST_PROXY.`,
        ].join('\n\n'),
      },
    },
  )
  .post(
    '/search-keys',
    async ({ apiKey, body, status }) =>
      status(
        201,
        await mintSearchKeys(apiKey.organizationId, {
          types: body.type ?? [...COLLECTIONS],
          ...filtersOf(body),
          expiresIn: body.expires_in ?? 3600,
        }),
      ),
    {
      auth: { role: 'manager' },
      body: SearchKeyRequest,
      response: { 201: SearchKeys, ...errorResponses },
      detail: {
        tags: ['Search'],
        summary: 'Mint scoped Typesense search keys',
        description: [
          "Typesense mode only (404 `not_found` unless TYPESENSE_URL and TYPESENSE_SEARCH_API_KEY are set). Manager keys. For a browser that queries Typesense directly (for example through `typesense-instantsearch-adapter`): one key per collection (`products`, `brands`, `retailers`), each a Typesense scoped search key (HMAC-SHA256 of the embedded parameters with a parent key, as the official client's `generateScopedSearchKey` computes) embedding `expires_at` and the collection's `filter_by`. Each collection has a parent key of its own, allowed `documents:search` on that collection alone: derived from the secret TYPESENSE_SEARCH_API_KEY and created in Typesense with TYPESENSE_API_KEY (which must be allowed `keys:create`) when first needed, so a key works only on its collection (Typesense checks the collection against the parent's; 503 when Typesense refuses the parent). The embedded filters are the filters given here for products (same meaning as on search), the caller's visible directory for retailers (active, and canonical or the caller's own). Typesense enforces the embedded parameters; a client cannot lift them.",
          "Use each key only on its collection: the product filters name fields the other collections lack. Substance flags (weak matches) are a feature of the service's own search endpoint; a scoped key only drops confident matches.",
        ].join('\n\n'),
      },
    },
  )
