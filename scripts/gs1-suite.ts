/**
 * Runs GS1's resolver test suite (gs1/GS1DL-resolver-testsuite, unmodified, from a folder outside
 * this repository) in headless Chromium against the service behind a TLS proxy, and prints each
 * test's outcome. scripts/gs1-suite.sh sets up the proxy, the service and the suite's PHP helper,
 * then runs this file; see there for the settings.
 *
 * The suite is a web page: GS1 hosts it with its PHP helper, two JSON schemas and the list of
 * ratified link types. Here nothing leaves the machine: the page's requests to those hosts are
 * answered from local copies (the helper runs under `php -S`), requests to the resolver go through
 * the TLS proxy, and any other request is refused and reported.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import puppeteer, { type HTTPRequest } from 'puppeteer-core'

const env = (name: string) => {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set (run scripts/gs1-suite.sh)`)
  return value
}

const SUITE = env('GS1_SUITE_DIR')
const SCHEMAS = env('GS1_SCHEMA_DIR')
const AJV = env('GS1_AJV_BUNDLE')
const PHP = env('GS1_PHP_URL') // the suite's tester.php, served by php -S
const ROOT = env('GS1_RESOLVER_ROOT') // https://127.0.0.1 (the TLS proxy)
const SERVICE = env('GS1_SERVICE_URL') // the service itself, for seeding
const ADMIN_TOKEN = env('GS1_ADMIN_TOKEN')
const CHROMIUM = process.env.CHROMIUM ?? ['chromium', 'chromium-browser'].map((b) => Bun.which(b)).find(Boolean)

const GTIN = '09506000134352'
const URIS = [`${ROOT}/01/${GTIN}`, `${ROOT}/01/${GTIN}/10/ABC123/21/1234`]

async function call(method: string, path: string, body: unknown, key?: string) {
  const res = await fetch(SERVICE + path, {
    method,
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : { 'x-admin-token': ADMIN_TOKEN }) },
    body: JSON.stringify(body),
  })
  const json = (await res.json()) as Record<string, any>
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}

/**
 * The suite's product: a default link, French and English product pages (negotiated by
 * Accept-Language), instructions as HTML and PDF (negotiated by Accept), and links of the lot and
 * the serial, so that the walk-up linkset has three levels.
 */
async function seed() {
  const org = await call('POST', '/account/api/v1/organizations', {
    name: 'GS1 suite',
    owner_email: 'suite@example.com',
    gs1_company_prefixes: ['950600013'],
  })
  const key = org.api_key.key as string
  const orgId = org.organization.id as string
  const product = await call(
    'POST',
    '/products/api/v1/products',
    { gtin: GTIN, product_name: 'Dal Giardino Risotto Rice with Mushrooms' },
    key,
  )
  const rules = `/resolver/api/v1/organizations/${orgId}/resolution-rules`
  const rule = (body: Record<string, unknown>) =>
    call('POST', rules, { scope_type: 'PRODUCT', product_id: product.id, ...body }, key)
  await rule({ link_type: 'gs1:defaultLink', custom_url: 'https://example.com/risotto', title: 'Risotto rice' })
  await rule({ link_type: 'gs1:pip', custom_url: 'https://example.com/en/risotto', hreflang: ['en'] })
  await rule({ link_type: 'gs1:pip', custom_url: 'https://example.com/fr/risotto', hreflang: ['fr'] })
  await rule({ link_type: 'gs1:instructions', custom_url: 'https://example.com/cooking', media_type: 'text/html' })
  await rule({
    link_type: 'gs1:instructions',
    custom_url: 'https://example.com/cooking.pdf',
    media_type: 'application/pdf',
  })
  await rule({ link_type: 'gs1:dpp', custom_url: 'https://example.com/dpp/risotto' })
  await rule({
    scope_type: 'BATCH',
    scope_id: 'ABC123',
    link_type: 'gs1:traceability',
    custom_url: 'https://example.com/lots/ABC123',
  })
  await rule({
    scope_type: 'SERIAL',
    scope_id: '1234',
    link_type: 'gs1:registerProduct',
    custom_url: 'https://example.com/register/1234',
  })
}

/**
 * The list GS1 serves at ref.gs1.org/voc/data/linktypes (term → title, description, status), made
 * from the vocabulary extract the resolver loads (src/resolver/gs1-web-vocabulary-link-types.jsonld).
 */
function ratifiedLinkTypes() {
  const vocabulary = JSON.parse(
    readFileSync(new URL('../src/resolver/gs1-web-vocabulary-link-types.jsonld', import.meta.url), 'utf8'),
  ) as { '@graph': Record<string, any>[] }
  const list: Record<string, { title: string; description: string; status: string }> = {}
  for (const node of vocabulary['@graph'])
    if ([node['rdfs:subPropertyOf']].flat().some((p) => p?.['@id'] === 'gs1:linkType'))
      list[String(node['@id']).slice(4)] = {
        title: node['rdfs:label']?.['@value'],
        description: node['rdfs:comment']?.['@value'],
        status: node['sw:term_status'],
      }
  return list
}

type Outcome = { id: string; status: string; test: string; msg: string; shown: string }

/** The answer the page gets for a request to one of GS1's hosts, from a local copy. */
async function standIn(url: URL): Promise<{ status: number; body: string; type: string } | null> {
  const json = (file: string) => ({ status: 200, body: readFileSync(file, 'utf8'), type: 'application/json' })
  if (url.hostname === 'philarcher.org' && url.pathname === '/gs1/tester.php') {
    const res = await fetch(`${PHP}/tester.php${url.search}`)
    return { status: res.status, body: await res.text(), type: 'application/json' }
  }
  if (url.href === 'https://gs1.github.io/linkset/gs1-linkset-schema.json')
    return json(join(SCHEMAS, 'gs1-linkset-schema.json'))
  if (url.href === 'https://ref.gs1.org/standards/resolver/description-file-schema')
    return json(join(SCHEMAS, 'description-file-schema.json'))
  if (url.href === 'https://ref.gs1.org/voc/data/linktypes')
    return { status: 200, body: JSON.stringify(ratifiedLinkTypes()), type: 'application/json' }
  if (url.href === 'https://ref.gs1.org/test-suites/resolver/') {
    const page = `<!doctype html><html><head><meta charset="utf-8">
<script src="ajv7.bundle.js"></script><script src="GS1DigitalLinkToolkit.js"></script>
<script src="GS1DigitalLinkResolverTestSuite.js"></script></head>
<body><img id="rotatingcircle" alt=""><div id="gs1ResolverTests"></div></body></html>`
    return { status: 200, body: page, type: 'text/html' }
  }
  if (url.href === 'https://ref.gs1.org/favicon.ico') return { status: 404, body: '', type: 'text/plain' }
  if (url.href === 'https://ref.gs1.org/test-suites/resolver/ajv7.bundle.js')
    return { status: 200, body: readFileSync(AJV, 'utf8'), type: 'text/javascript' }
  const file = /^\/test-suites\/resolver\/([\w.]+\.js)$/.exec(url.pathname)?.[1]
  if (url.hostname === 'ref.gs1.org' && file)
    return { status: 200, body: readFileSync(join(SUITE, file), 'utf8'), type: 'text/javascript' }
  return null
}

async function runSuite(uri: string, refused: string[]): Promise<Outcome[]> {
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM!,
    headless: true,
    acceptInsecureCerts: true, // the proxy's certificate is self-signed
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      // the page's origin stands in for GS1's public site and the resolver is on loopback here:
      // Chromium's local network access checks would refuse what a public resolver is asked
      '--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights',
    ],
  })
  try {
    const page = await browser.newPage()
    page.on('console', (m) => console.error(`  [page] ${m.text()}`))
    await page.setRequestInterception(true)
    page.on('request', (request: HTTPRequest) => {
      const url = new URL(request.url())
      if (url.origin === ROOT) return void request.continue()
      standIn(url).then(
        (answer) => {
          if (!answer) {
            refused.push(`${request.method()} ${url.href}`)
            return request.abort('blockedbyclient')
          }
          return request.respond({
            status: answer.status,
            contentType: answer.type,
            // GS1's hosts serve the helper to the suite's page; the stand-ins do the same cross-origin
            headers: { 'access-control-allow-origin': '*' },
            body: answer.body,
          })
        },
        () => request.abort('failed'),
      )
    })
    await page.goto('https://ref.gs1.org/test-suites/resolver/')
    // testDL is a top-level const of the suite's script: reachable by name, not as a global property
    await page.evaluate(`globalThis.suiteDone = testDL(${JSON.stringify(uri)}).then(() => true)`)
    await page.waitForFunction(() => (globalThis as any).suiteDone, { timeout: 300_000, polling: 200 })
    // the TLS and description file checks are not awaited by the suite: let their requests end
    await page.waitForNetworkIdle({ idleTime: 500, timeout: 60_000 })
    // the suite's own record of its tests (its summary counts these): a few tests set their
    // outcome without redrawing the page (runTest stopped calling recordResult in 2025), so the
    // page can still show such a test red after it passed; `shown` says what the page shows
    return (await page.evaluate(`resultsArray.map((r) => ({
      id: r.id, status: r.status, test: r.test, msg: r.msg,
      shown: document.getElementById(r.id + 'dd')?.className ?? '',
    }))`)) as Outcome[]
  } finally {
    await browser.close()
  }
}

if (!CHROMIUM) throw new Error('chromium is not installed (apt-get install chromium)')
await seed()
let failures = 0
for (const uri of URIS) {
  const refused: string[] = []
  const outcomes = await runSuite(uri, refused)
  const count = (s: string) => outcomes.filter((o) => o.status === s).length
  console.log(`\n== ${uri}`)
  for (const o of outcomes) {
    const shown = o.shown === o.status ? '' : ` [the page shows it as ${o.shown}]`
    console.log(`${o.status.toUpperCase().padEnd(5)} ${o.id}: ${o.msg}${shown}\n      (${o.test})`)
  }
  for (const r of refused) console.log(`REFUSED request outside the machine: ${r}`)
  console.log(`${count('pass')} passed, ${count('fail')} failed, ${count('warn')} warnings`)
  failures += count('fail') + count('warn') + refused.length + (outcomes.length === 0 ? 1 : 0)
}
process.exit(failures === 0 ? 0 : 1)
