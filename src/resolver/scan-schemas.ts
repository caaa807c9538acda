import { t } from 'elysia'
import { config } from '../config'
import { Problem } from '../http/openapi'
import { GS1_VOC } from './formats'

/** The scan routes' OpenAPI schemas and description (contract §2: GS1 Digital Link resolving). */

export const LINKSET_TYPE = 'application/linkset+json'

export const Linkset = t.Object(
  {
    linkset: t.Array(
      t.Object(
        {
          anchor: t.String({ description: 'the Digital Link URI resolved' }),
          itemDescription: t.String({ description: "the product's name, or its GTIN when it has none" }),
        },
        {
          additionalProperties: t.Array(
            t.Object({
              href: t.String(),
              title: t.String(),
              type: t.String({ description: 'media type of the target' }),
              hreflang: t.Array(t.String()),
            }),
          ),
          description: `one member per link type, keyed by its URI in the GS1 vocabulary (${GS1_VOC}pip, …)`,
        },
      ),
    ),
  },
  { description: 'RFC 9264 linkset', 'x-content-type': LINKSET_TYPE },
)

/** The answers of a scan, for the OpenAPI document. */
export const SCAN_RESPONSES = {
  200: Linkset,
  300: t.Object(Linkset.properties, {
    description: 'equally good choices, as a linkset',
    'x-content-type': LINKSET_TYPE,
  }),
  304: t.Void({ description: 'the linkset has not changed (If-None-Match)' }),
  307: t.Void({ description: 'redirect: Location is the chosen target' }),
  400: Problem,
  401: Problem,
  404: Problem,
  422: Problem,
  429: Problem,
}

export const ResolveQuery = t.Object(
  {
    linkType: t.Optional(
      t.String({
        description:
          'a GS1 link type (gs1:pip, gs1:allergenInfo, …) to be sent to, or `linkset` (also the deprecated `all`) for every link as a linkset',
      }),
    ),
    explain: t.Optional(
      t.String({ description: 'present: say which scope, rule and condition chose the link, as JSON' }),
    ),
    country: t.Optional(
      t.String({
        description: `the caller's ISO 3166-1 country (testing); else the ${config.GEO_COUNTRY_HEADER} header`,
      }),
    ),
    region: t.Optional(
      t.String({ description: `the caller's ISO 3166-2 region (US-CA); else the ${config.GEO_REGION_HEADER} header` }),
    ),
    city: t.Optional(t.String({ description: `the caller's city; else the ${config.GEO_CITY_HEADER} header` })),
  },
  { additionalProperties: true, description: 'any other parameter is passed on to the target' },
)

export const DESCRIPTION = [
  'GS1-Conformant Resolver (1.2). Public; with no API key at most RESOLVER_ANONYMOUS_PER_MINUTE requests a minute per address, as search.',
  'The GTIN may be written with 8 (a GTIN-8, never a UPC-E), 12, 13 or 14 digits; key qualifiers follow in the standard order; a trailing slash is the same resource. A malformed URI (check digit, qualifier order, a value outside its AI format, a query-string data attribute such as `?17=` outside its AI format, a primary key or key qualifier in the query string) is 400 `invalid_digital_link`; an unknown GTIN is 404. A lot or serial that no rule names resolves as the product (the standard walks up, not 404).',
  "Choice: the applicable rules (enabled, every condition holding now: absolute window, annual window, days of week and time of day in the rule's time zone, the caller's place) of the most specific scope win (SERIAL > BATCH > PRODUCT > BRAND > ORGANIZATION); among them the request's `Accept-Language` against each link's hreflang, then its `Accept` against each link's media type, then the lowest order_index (then the oldest). With `linkType` (`gs1:pip` or its URI under `https://gs1.org/voc/`, `https://ref.gs1.org/voc/` or `https://www.gs1.org/voc/`), only rules of that type count (none, or a type the GS1 Web Vocabulary lacks: 404; a value of no link type's form: 400, and `?explain=1` still shows how the URI reads). Without it the default link is taken: the best `gs1:defaultLink` rule, else the best rule of the best rule's type. Rules left tied on all of these with different targets (a tie the request's languages and media types cannot break) answer 300 with a linkset of the choices.",
  "A compressed Digital Link URI (`/AQEd-0_ymA` for `/01/00614141000012`, GS1 Digital Link URI Syntax §7, decompressed with GS1's toolkit) is served as its uncompressed form.",
  'A product whose claim is disputed (its GTIN lies under a GS1 company prefix registered to another organization) or rejected resolves to nothing, 404, until the claim is settled: the rules of a contested claim send no one anywhere.',
  "Links and linkset anchors start with the service's public origin: PUBLIC_URL, or behind TRUST_PROXY the proxy's X-Forwarded-Proto and X-Forwarded-Host (else the Host it passed on), checked as a host name; never a Host header a client wrote. Rule targets are sent percent-encoded.",
  '307 to the target, with the request\'s query passed on (less linkType, explain, country, region, city), the rule\'s section_anchor as fragment, and `Link: <…?linkType=linkset>; rel="linkset"`. `linkType=linkset` (or `all`), or `Accept: application/linkset+json`, answers 200 with the RFC 9264 linkset instead, walking up: one object for each level of the URI that has links (the serial, the lot, the GTIN), anchored at the URI of that level and named by `itemDescription` (the product name, else its GTIN, with the lot or serial); in each, per link type, the links of the most specific scope offering it; the default link once, with a title only, and all default links that languages or media types choose among as gs1:defaultLinkMulti. It carries the JSON-LD context `Link` header and an ETag, and answers 304 to If-None-Match. OPTIONS carries the linkset `Link` too. CORS is open for GET, HEAD and OPTIONS.',
].join('\n\n')
