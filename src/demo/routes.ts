import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Elysia } from 'elysia'
import { ALLERGENS, CERTIFICATION_SLUGS, substanceSlug } from '../catalog/ingredients/analyze'
import { Binary, errorResponses } from '../http/openapi'
import { notFound } from '../shared/errors'

/** The substances the page offers to exclude: ones shoppers commonly avoid (each a known slug). */
export const DEMO_SUBSTANCES = ['palm-oil', 'e250', 'high-fructose-corn-syrup', 'e441', 'glucose-syrup']
for (const slug of DEMO_SUBSTANCES) if (substanceSlug(slug) !== slug) throw new Error(`unknown substance ${slug}`)

/** The filter toggles, from the catalog's own lists; the page builds its chips from them. */
const VOCABULARY = {
  exclude_allergens: ALLERGENS,
  certifications: [...CERTIFICATION_SLUGS].sort(),
  exclude_substances: DEMO_SUBSTANCES,
}

const file = (name: string) => readFileSync(join(import.meta.dir, name), 'utf8')
const PAGE = file('search.html').replace(
  'id="vocabulary">{}<',
  `id="vocabulary">${JSON.stringify(VOCABULARY).replaceAll('<', '\\u003c')}<`,
)
const ASSETS: Record<string, { body: string; type: string }> = {
  'search.js': { body: file('search.js'), type: 'text/javascript; charset=utf-8' },
  'search.css': { body: file('search.css'), type: 'text/css; charset=utf-8' },
}

const served = (body: string, type: string) =>
  new Response(body, { headers: { 'content-type': type, 'cache-control': 'no-cache' } })

// The instant-search page (contract §2): static files of the repository, no build step and no
// other host; it calls the service's own search endpoint.
export const demoRoutes = new Elysia({ name: 'demo' })
  .get('/demo/search', () => served(PAGE, 'text/html; charset=utf-8'), {
    response: { 200: Binary(['text/html'], 'the page'), ...errorResponses },
    detail: {
      tags: ['Demo'],
      summary: 'Instant-search page',
      description:
        'An HTML page that queries catalog search (`GET /catalog/api/v1/search`, anonymously, so under its rate limit) as the user types: requests wait for a 120 ms pause and each keystroke aborts the one before, so no stale answer is shown. Rows show their type and match tier; the allergen, certification and substance filters are toggles. Its script and style are `/demo/search.js` and `/demo/search.css`, served from the repository.',
      security: [],
    },
  })
  .get(
    '/demo/:asset',
    ({ params }) => {
      const asset = ASSETS[params.asset]
      if (!asset) throw notFound('asset')
      return served(asset.body, asset.type)
    },
    { detail: { hide: true } },
  )
