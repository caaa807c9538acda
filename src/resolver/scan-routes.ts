import { createHash } from 'node:crypto'
import type { Server } from 'bun'
import { Elysia, NotFoundError, t } from 'elysia'
import { authenticate, knownCaller } from '../accounts/api-keys'
import { config } from '../config'
import { auth } from '../http/auth'
import { clientAddress, limitKey } from '../http/client-ip'
import { checkHead, checkQuery } from '../http/edge'
import { Problem } from '../http/openapi'
import { problemResponse, toAppError } from '../http/problems'
import { type Listener, publicOrigin } from '../http/public-origin'
import { consume, rateLimitHeaders } from '../http/rate-limit'
import { logRequest, newRequestId } from '../http/request-context'
import { pathOf, queryOf } from '../http/url'
import { AppError } from '../shared/errors'
import { decompressedPath } from './compressed'
import type { Place } from './conditions'
import { checkDataAttributes, parseDigitalLinkPath } from './digital-link'
import { GS1_VOC, linkTypeCurie } from './formats'
import { choicesOf, linksetOf } from './linkset'
import { withRecall } from './recall-links'
import { anchorOf, choose, evaluate, explanation, type Outcome, redirectTarget } from './resolve'
import { type ProductRef, ruleIndex } from './rule-index'
import { DESCRIPTION, LINKSET_TYPE, ResolveQuery, SCAN_RESPONSES } from './scan-schemas'

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'Link, Location, ETag',
}
const PREFLIGHT = {
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-allow-headers': 'Accept, Accept-Language, If-None-Match, X-API-Key',
  'access-control-max-age': '86400',
  allow: 'GET, HEAD, OPTIONS',
}
/** The JSON-LD context of a linkset's link type URIs (GS1 Conformant Resolver 1.2, linkset responses). */
const CONTEXT_LINK = `<${GS1_VOC}?show=linktypes>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`
const linksetLink = (anchor: string) => `<${anchor}?linkType=linkset>; rel="linkset"; type="${LINKSET_TYPE}"`
const ANONYMOUS = {
  name: 'resolve-anonymous',
  points: config.RESOLVER_ANONYMOUS_PER_MINUTE,
  seconds: 60,
  what: 'anonymous resolutions',
}

/** The caller's place: the `country`/`region`/`city` query override, else the configured proxy headers. */
function placeOf(query: URLSearchParams, headers: Headers): Place {
  const country = (query.get('country') ?? headers.get(config.GEO_COUNTRY_HEADER) ?? '').toUpperCase() || null
  let region = (query.get('region') ?? headers.get(config.GEO_REGION_HEADER) ?? '').toUpperCase() || null
  // CDNs send the subdivision part alone (CA); rules name it in full (US-CA)
  if (region && !region.includes('-') && country) region = `${country}-${region}`
  const city = query.get('city') ?? headers.get(config.GEO_CITY_HEADER) ?? null
  return { country, region, city: city || null }
}

const wantsLinkset = (linkType: string | null, accept: string | null) =>
  linkType === 'linkset' || linkType === 'all' || (accept ?? '').toLowerCase().includes(LINKSET_TYPE)

function jsonResponse(status: number, body: unknown, type: string, headers: Record<string, string> = {}) {
  return new Response(JSON.stringify(body), { status, headers: { ...CORS, 'content-type': type, ...headers } })
}

/** Every answer of the resolver, errors included (the edge's too), is readable cross-origin. */
function withCors(error: unknown): unknown {
  return error instanceof AppError
    ? new AppError(error.code, error.message, error.errors, { ...CORS, ...error.headers })
    : error
}

async function resolveScan(request: Request, server: Listener | null, caller: unknown): Promise<Response> {
  try {
    return await answer(request, server, caller, undefined)
  } catch (error) {
    throw withCors(error)
  }
}

const NO_QUERY = new URLSearchParams()

/** A response now, or one to wait for: a scan of a known caller and product makes no promise. */
type Answer = Response | Promise<Response>

/**
 * `requestId`: sent as X-Request-Id on every answer (the Elysia routes add it themselves). An
 * anonymous caller's request is counted first, whatever it asks.
 */
function answer(request: Request, server: Listener | null, caller: unknown, requestId: string | undefined): Answer {
  if (caller) return resolveNow(request, server, undefined, requestId, undefined)
  const socket = server?.requestIP(request)?.address
  const address = clientAddress(socket, request.headers.get('x-forwarded-for') ?? undefined)
  return consume(ANONYMOUS, address ? limitKey(address) : 'unknown').then((state) =>
    resolveNow(request, server, state ? rateLimitHeaders(state) : undefined, requestId, undefined),
  )
}

/** A product whose claim is disputed or rejected: its rules send no one anywhere until it is settled. */
const WITHHELD = new Set(['disputed', 'rejected'])
const withheldReason = (status: string) =>
  `the claim on this product is ${status}: its links are withheld until the claim is settled`

/**
 * The answer to a scan; it waits only for the rule index to load (`indexWaited` once it has) or
 * for a product not yet kept (`loaded`: that product, once read).
 */
function resolveNow(
  request: Request,
  server: Listener | null,
  limitHeaders: Record<string, string> | undefined,
  requestId: string | undefined,
  loaded: ProductRef | null | undefined,
  indexWaited = false,
): Answer {
  const href = request.url
  const search = queryOf(href)
  const query = search ? new URLSearchParams(search) : NO_QUERY
  const headers = request.headers
  const scan = parseDigitalLinkPath(pathOf(href))
  if (query !== NO_QUERY) checkDataAttributes(query)
  const linkTypeParam = query.get('linkType')
  const linkset = wantsLinkset(linkTypeParam, headers.get('accept'))
  // a link type the item lacks, known or not, is 404 below; only a value of no link type's form is 400
  const asked = linkTypeParam === null || linkset ? null : linkTypeCurie(linkTypeParam)
  const refused =
    linkTypeParam !== null && !linkset && asked === null
      ? `linkType ${linkTypeParam} is not a GS1 link type (gs1:pip or ${GS1_VOC}pip, …) or linkset`
      : null
  // `?explain=1` still says how the URI reads, with the refusal as its outcome
  if (refused !== null && !query.has('explain')) throw new AppError('invalid_digital_link', refused)
  if (!indexWaited && !ruleIndex.isReady())
    return ruleIndex.ready().then(() => resolveNow(request, server, limitHeaders, requestId, loaded, true))
  const product = loaded !== undefined ? loaded : ruleIndex.knownProduct(scan.gtin)
  if (product === undefined)
    return ruleIndex
      .product(scan.gtin)
      .then((found) => resolveNow(request, server, limitHeaders, requestId, found, true))
  if (!product) throw new AppError('not_found', `no product with GTIN ${scan.gtin}`)
  const now = Date.now()
  const place = placeOf(query, headers)
  const withheld = product.claimStatus !== null && WITHHELD.has(product.claimStatus)
  const origin = publicOrigin(request, server)
  const rules = withheld ? [] : withRecall(product, origin, ruleIndex.rulesFor(product, scan.lot, scan.serial))
  const evaluations = evaluate(rules, now, place)
  const anchor = anchorOf(origin, scan)
  const linkType = asked ?? undefined
  const outcome: Outcome = refused
    ? { kind: 'none', reason: refused, status: 400 }
    : withheld
      ? { kind: 'none', reason: withheldReason(product.claimStatus!) }
      : choose(evaluations, linkType, headers)
  // the answer depends on the languages and media types asked for (content negotiation)
  const common: Record<string, string> = { vary: 'Accept, Accept-Language', 'cache-control': 'no-cache' }
  if (limitHeaders !== undefined) Object.assign(common, limitHeaders)
  if (requestId !== undefined) common['x-request-id'] = requestId

  if (query.has('explain'))
    return jsonResponse(
      200,
      explanation(scan, product, refused ? linkTypeParam! : linkType, new Date(now), place, evaluations, outcome),
      'application/json',
      common,
    )
  if (linkset) {
    const body = linksetOf(origin, scan, product.name || product.gtin, evaluations)
    if (!body)
      throw new AppError(
        'not_found',
        outcome.kind === 'none' && withheld ? outcome.reason : 'no link of this product holds now and here',
      )
    const text = JSON.stringify(body)
    const etag = `"${createHash('sha1').update(text).digest('base64url')}"`
    const cached = (headers.get('if-none-match') ?? '')
      .split(',')
      .some((tag) => tag.trim().replace(/^W\//, '') === etag)
    if (cached) return new Response(null, { status: 304, headers: { ...CORS, ...common, etag, link: CONTEXT_LINK } })
    return new Response(text, {
      status: 200,
      headers: { ...CORS, ...common, 'content-type': LINKSET_TYPE, etag, link: CONTEXT_LINK },
    })
  }
  if (outcome.kind === 'none') throw new AppError('not_found', outcome.reason)
  if (outcome.kind === 'choices')
    return jsonResponse(
      300,
      choicesOf(anchor, product.name || product.gtin, outcome.rules, outcome.linkType),
      LINKSET_TYPE,
      common,
    )
  // the hot answer: one headers object, no spreads
  Object.assign(common, CORS)
  common.location = redirectTarget(outcome.rule, query)
  common.link = linksetLink(anchor)
  return new Response(null, { status: 307, headers: common })
}

const PATHS = [
  '',
  '/22/:cpv',
  '/10/:lot',
  '/21/:serial',
  '/22/:cpv/10/:lot',
  '/22/:cpv/21/:serial',
  '/10/:lot/21/:serial',
  '/22/:cpv/10/:lot/21/:serial',
]

/** A preflight's headers; on a Digital Link URI, the linkset `Link` a GET of it carries too. */
function preflight(request: Request, server: Listener | null): Record<string, string> {
  const headers: Record<string, string> = { ...CORS, ...PREFLIGHT }
  try {
    headers.link = linksetLink(anchorOf(publicOrigin(request, server), parseDigitalLinkPath(pathOf(request.url))))
  } catch {
    // not a valid Digital Link URI: a GET of it is 400, with no Link either
  }
  return headers
}

const scanRoutes = new Elysia({ name: 'digital-link-paths' }).use(auth)
for (const tail of PATHS)
  scanRoutes.get(`/01/:gtin${tail}`, ({ request, server, caller }) => resolveScan(request, server, caller), {
    optionalAuth: true,
    query: ResolveQuery,
    response: SCAN_RESPONSES,
    detail: {
      tags: ['Resolver'],
      summary:
        tail === '' ? 'Resolve a GTIN (GS1 Digital Link)' : `Resolve a GTIN with ${tail.replace(/\/:?/g, ' ').trim()}`,
      description: DESCRIPTION,
    },
  })

/**
 * A compressed Digital Link URI (GS1 Digital Link URI Syntax §7: `/AQEd-0_ymA` is
 * `/01/00614141000012`) is the resource its uncompressed form names: resolved as that request,
 * with this request's query added, its headers and its caller's address. A segment that is no
 * compressed URI of a GTIN is an unknown path (404), as before.
 */
function resolveCompressed(request: Request, server: Listener | null, caller: unknown, segment: string) {
  const path = decompressedPath(segment)
  if (path === null) throw new NotFoundError()
  const url = new URL(request.url)
  const uncompressed = new URL(path, url.origin)
  for (const [name, value] of url.searchParams) uncompressed.searchParams.append(name, value)
  const socket = server?.requestIP(request) ?? null
  const listener: Listener = { hostname: server?.hostname, port: server?.port, requestIP: () => socket }
  return resolveScan(
    new Request(uncompressed.href, { method: request.method, headers: request.headers }),
    listener,
    caller,
  )
}

for (const slash of ['', '/'])
  scanRoutes.get(
    `/:compressed${slash}`,
    ({ request, server, caller, params }) => resolveCompressed(request, server, caller, params.compressed),
    {
      optionalAuth: true,
      params: t.Object({ compressed: t.String({ description: 'the compressed Digital Link URI (base64url)' }) }),
      query: ResolveQuery,
      response: SCAN_RESPONSES,
      detail: {
        tags: ['Resolver'],
        summary: 'Resolve a compressed GS1 Digital Link URI',
        description: `A compressed Digital Link URI (\`/AQEd-0_ymA\` for \`/01/00614141000012\`, decompressed with GS1's Digital Link toolkit) answers as its uncompressed form, this request's query added; a path segment that is no compressed URI of a GTIN is 404.\n\n${DESCRIPTION}`,
        hide: slash === '/',
      },
    },
  )

const SCAN = /^\/01\/[^/?]/

/** The edge's checks, the key, then the answer: without a promise when the key is cached. */
function scan(request: Request, server: Server<unknown>, url: string, path: string, id: string): Answer {
  checkHead(request, url, path)
  checkQuery(url, undefined)
  const key = request.headers.get('x-api-key') ?? undefined
  const known = knownCaller(key)
  if (known !== undefined) return answerTo(request, server, key, known, id)
  return authenticate(key).then((caller) => answerTo(request, server, key, caller, id))
}

function answerTo(request: Request, server: Server<unknown>, key: string | undefined, caller: unknown, id: string) {
  if (key !== undefined && !caller)
    throw new AppError('unauthenticated', 'send a valid, unrevoked API key in the X-API-Key header')
  return answer(request, server, caller, id)
}

const problemOf = (error: unknown, id: string) => problemResponse(toAppError('UNKNOWN', withCors(error), id), id)

function logged(response: Response, request: Request, path: string, id: string, began: number): Response {
  logRequest(id, request.method, path, response.status, began)
  return response
}

/** Where scanServeRoutes sends the requests it does not serve: the app. */
type Fallback = { handle: (request: Request) => Promise<Response> }

/**
 * Scans are the service's hottest path (every QR code on every pack), so Bun's own router hands
 * them to this function directly, outside Elysia's per-request machinery (context, lifecycle
 * hooks, the after-response task each request schedules): measured in scripts/bench/resolve.ts,
 * that machinery cost more than the resolution. The function keeps the service's conventions
 * with the same code the app uses: the request id, the edge's limits on head, path and query,
 * the key check, problem+json, the request log line. A path with a trailing slash is the same
 * resource here (contract §2, GS1 Conformant Resolver), not a 308 as elsewhere. A path it does not
 * serve (one that Bun's dot-segment resolution took out of /01/) goes on to the app. The Elysia routes of the same paths declare these answers in
 * the OpenAPI document and serve requests given to app.handle.
 */
export function scanServeRoutes(app: () => Fallback) {
  const serve = (request: Request, server: Server<unknown>): Answer => {
    const began = performance.now()
    const url = request.url
    const path = pathOf(url)
    if (!SCAN.test(path)) return app().handle(request)
    const id = newRequestId(request)
    let answered: Answer
    try {
      answered = scan(request, server, url, path, id)
    } catch (error) {
      answered = problemOf(error, id)
    }
    if (answered instanceof Promise)
      return answered
        .then(null, (error) => problemOf(error, id))
        .then((response) => logged(response, request, path, id, began))
    return logged(answered, request, path, id, began)
  }
  const methods = { GET: serve, HEAD: serve }
  // Elysia strips a route's trailing slash before Bun sees it: the wildcard takes the slash forms
  // (and any malformed path under /01/, which the scan refuses with 400 as the app would)
  return { ...Object.fromEntries(PATHS.map((tail) => [`/01/:gtin${tail}`, methods])), '/01/*': methods }
}

/** Public GS1 Digital Link resolving (contract §2) and the resolver's description file. */
export const resolverRoutes = new Elysia({ name: 'digital-link' })
  .use(scanRoutes)
  // any other path under /01/ is a malformed Digital Link URI (400), not an unknown route
  .get('/01/*', ({ request, server, caller }) => resolveScan(request, server, caller), {
    optionalAuth: true,
    detail: { hide: true },
  })
  .options('/01/*', ({ request, server }) => new Response(null, { status: 204, headers: preflight(request, server) }), {
    detail: { hide: true },
  })
  .get(
    '/.well-known/gs1resolver',
    ({ request, server, set }) => {
      Object.assign(set.headers, CORS)
      return {
        name: 'GTIN catalog resolver',
        resolverRoot: publicOrigin(request, server),
        supportedPrimaryKeys: ['01'],
        supportedLinkType: [{ namespace: GS1_VOC, prefix: 'gs1:' }],
        linkTypeDefaultCanBeLinkset: false,
        supportedContextValuesExternal: [
          { nameOfList: 'ISO 3166-1 alpha-2 and ISO 3166-2', url: 'https://www.iso.org/iso-3166-country-codes.html' },
        ],
      }
    },
    {
      response: {
        200: t.Object({
          name: t.String(),
          resolverRoot: t.String(),
          supportedPrimaryKeys: t.Array(t.String()),
          supportedLinkType: t.Array(t.Object({ namespace: t.String(), prefix: t.String() })),
          linkTypeDefaultCanBeLinkset: t.Boolean(),
          supportedContextValuesExternal: t.Array(t.Object({ nameOfList: t.String(), url: t.String() })),
        }),
        // the edge's refusals, as on every route
        405: Problem,
        414: Problem,
        431: Problem,
      },
      detail: {
        tags: ['Resolver'],
        summary: 'Describe the resolver (GS1 resolver description file)',
        security: [],
        description:
          'The GS1-Conformant Resolver description: root, primary keys (01), link type namespace, whether linkset is the default. Public, readable cross-origin (CORS open).',
      },
    },
  )
