import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import pg from 'pg'
import { parseId } from '../../../src/shared/ids'
import { eventually } from '../../support/eventually'
import { ADMIN } from '../../support/fixtures'
import { ownDatabase } from '../../support/own-database'
import { ROOT, startServer } from '../../support/process'
import { api, type CallOptions } from '../../support/server'

// Feed imports of the real sample files (test/fixtures/feeds, the project's sample data) through
// the API, on a service process of its own with its own database (the samples' GTINs are fixed),
// chunks of 10 rows so that every file spans several chunk jobs.
const database = ownDatabase('feeds')
const feedDir = mkdtempSync(join(tmpdir(), 'feeds-'))
let apiUrl = ''
let server: Awaited<ReturnType<typeof startServer>>
let db: pg.Client
let org: { id: string; key: string }
let other: { id: string; key: string }
const RUNS = '/feeds/api/v1/runs'
const PRODUCTS = '/products/api/v1/products'

beforeAll(async () => {
  cpSync(join(ROOT, 'test/fixtures/feeds'), feedDir, { recursive: true })
  await database.create()
  server = await startServer({
    DATABASE_URL: database.url,
    FEED_DIR: feedDir,
    FEED_CHUNK_ROWS: '10',
    ADMIN_TOKEN: ADMIN['x-admin-token'],
    LOG_LEVEL: 'warn',
  })
  apiUrl = server.url
  db = new pg.Client({ connectionString: database.url })
  await db.connect()
  org = await organization('Feeds Org')
  other = await organization('Other Org')
}, 60_000)

afterAll(async () => {
  server?.kill('SIGTERM')
  await server?.exited
  await db?.end()
  await database.drop()
  rmSync(feedDir, { recursive: true, force: true })
})

const { call, get, post } = api(() => apiUrl)

/** Runs started with the admin token are the platform's: their values carry the source's weight. */
const PLATFORM = 'platform'
const as = (key: string): CallOptions => (key === PLATFORM ? { headers: ADMIN } : { key })

async function organization(label: string) {
  const body = { name: label, owner_email: `o${Date.now()}${Math.random()}@feeds.test` }
  const { json } = await post('/account/api/v1/organizations', body, undefined, ADMIN)
  return { id: json.organization.id as string, key: json.api_key.key as string }
}

const query = async <T = any>(text: string, params: unknown[] = []) => (await db.query(text, params)).rows as T[]

/** Starts a run (the platform's unless a key is given) and waits for it to finish. */
async function importFeed(body: unknown, key = PLATFORM, type?: string, path = RUNS) {
  const sent = typeof body === 'string' || Buffer.isBuffer(body) ? { raw: body } : { body }
  const started = await call('POST', path, { ...as(key), ...sent, type })
  expect(started.status).toBe(202)
  expect(started.json.status).toBe('queued')
  const run = await eventually(
    async () => {
      const read = await call('GET', `${RUNS}/${started.json.id}`, as(key))
      // anything but 200 ends the wait, to fail the assertion below
      return (read.status !== 200 || read.json.status === 'succeeded' || read.json.status === 'failed') && read
    },
    60_000,
    `feed run ${started.json.id} to finish`,
  )
  expect(run.status).toBe(200)
  return run.json
}

const product = async (gtin: string) => (await get(`${PRODUCTS}/${gtin}`, org.key)).json
const counts = async () =>
  (
    await query<{ candidates: number; events: number; products: number }>(
      `select (select count(*)::int from product_candidate_values) candidates, (select count(*)::int from events) events,
              (select count(*)::int from products) products`,
    )
  )[0]!

describe('Open Food Facts JSONL', () => {
  let first: any
  test('imports the dump: counts, rejected lines with reasons, how codes were read', async () => {
    first = await importFeed({ source: 'off', path: 'off/products.jsonl' })
    expect(first).toMatchObject({
      status: 'succeeded',
      source: 'off',
      data_source: 'open_food_facts',
      format: 'off_jsonl',
      file: expect.stringContaining('off/products.jsonl'),
      error: null,
      progress: { percent: 100, chunks_total: 5, chunks_done: 5 },
      counts: { read: 45, created: 40, updated: 0, unchanged: 0, rejected: 5 },
      disappeared: null,
    })
    expect(first.code_readings).toMatchObject({ upce: 1, upca_leading_zero_restored: 1, gtin12: 1 })
    expect(first.rejected_sample.map((r: any) => r.line)).toEqual([5, 6, 16, 19, 32])
    const reasons = Object.fromEntries(first.rejected_sample.map((r: any) => [r.line, r.reason]))
    expect(reasons[5]).toContain('restricted circulation number')
    expect(reasons[6]).toContain('restricted circulation number')
    expect(reasons[16]).toContain('wrong check digit')
    expect(reasons[32]).toStartWith('malformed JSON')
    // in-store codes are never products
    expect(await query(`select gtin from products where gtin in ('00000026281742', '00000027096765')`)).toEqual([])
    // its five chunks were stored together, each with its one job: in the platform's group, chunk n
    // before n+1, with the queue's retries
    const jobs = await query(
      `select data->>'chunk' chunk, singleton_key, priority, group_id, retry_limit, dead_letter
         from pgboss.job where name = 'feeds.chunk' and data->>'runId' = $1 order by priority desc`,
      [parseId(first.id)],
    )
    expect(jobs).toEqual(
      [1, 2, 3, 4, 5].map((n) => ({
        chunk: String(n),
        singleton_key: `${parseId(first.id)}:${n}`,
        priority: -n,
        group_id: 'platform',
        retry_limit: 2,
        dead_letter: 'feeds.chunk.dead',
      })),
    )
  }, 90_000)

  test('records field by field', async () => {
    // an 11-digit UPC-A gets its leading zero back; the brand is only in brand_owner
    expect(await product('025000044984')).toMatchObject({
      gtin: '00025000044984',
      product_name: 'Simply lemonade',
      brand: 'The Minute Maid Company',
      manufacturer: 'The Minute Maid Company',
      data_source: 'open_food_facts',
      is_claimed: false,
      owner_id: null,
      ingredients_text: 'Contains pure filtered water, lemon juice, cane sugar, natural flavors.',
      field_confidence: { product_name: 0.7, brand: 0.7 },
    })
    // "75 cl" normalised to 750 MLT; the description from generic_name
    expect(await product('3256220513173')).toMatchObject({
      product_name: 'Sirop de thé pêche',
      brand: 'U',
      description: 'Sirop de Thé Pêche',
      net_content: '75 cl',
      net_content_value: 750,
      net_content_uom: 'MLT',
    })
    // origins "Colombia" → CO; label tags → certification slugs; allergens from the ingredient parser
    const tulu = await product('850032917148')
    expect(tulu).toMatchObject({
      country_of_origin: 'CO',
      brand: 'Tulú',
      net_content_value: 500,
      net_content_uom: 'MLT',
    })
    expect(tulu.certifications).toEqual(expect.arrayContaining(['vegan', 'vegetarian']))
    const yaourt = await product('3661344653573')
    expect(yaourt.certifications).toEqual(expect.arrayContaining(['organic', 'eu-organic', 'fair-trade']))
    // "France, Bénélux" names two places: no single country of origin
    expect((await product('3270160503070')).country_of_origin).toBe('')
    // the Régilait code checks only as UPC-E: stored as the UPC-A it stands for
    expect((await product('040800000367')).product_name).toBe('Lait concentré non sucré entier')
    // "1/2 gal (1.89 L)" → 1890 MLT; "10 x 1.23 oz (35 g)" → 350 GRM (product_quantity wins when given)
    expect(await product('0072036001122')).toMatchObject({ net_content_value: 1890, net_content_uom: 'MLT' })
    expect(await product('0041303002018')).toMatchObject({ net_content_value: 350, net_content_uom: 'GRM' })
    // product_name only in product_name_fr
    expect((await product('3760178254021')).product_name).not.toBe('')
    // the milk's allergen comes from its ingredients
    expect((await product('3451790834080')).contains_allergens).toContain('milk')
  })

  test('re-importing the same file changes nothing and writes nothing', async () => {
    const before = await counts()
    const again = await importFeed({ source: 'off', path: 'off/products.jsonl' })
    expect(again.counts).toEqual({ read: 45, created: 0, updated: 0, unchanged: 40, rejected: 5 })
    expect(await counts()).toEqual(before)
  }, 90_000)
})

describe('more sources, promotion across them', () => {
  test('a claimed value survives an import; the source value is kept as a candidate', async () => {
    const claim = await post(PRODUCTS, { gtin: '0041303003992', product_name: 'Owner BBQ Sauce' }, org.key)
    expect(claim.status).toBe(201)
    const run = await importFeed({ source: 'off', path: 'off/products.csv' })
    expect(run).toMatchObject({ status: 'succeeded', format: 'off_csv' })
    // 18 rows are the JSONL's products: unchanged, but for the straight apostrophe of "Huile d'olive"
    expect(run.counts).toEqual({ read: 20, created: 1, updated: 2, unchanged: 16, rejected: 1 })
    const bbq = await product('0041303003992')
    expect(bbq.product_name).toBe('Owner BBQ Sauce')
    expect(bbq.ingredients_text).toStartWith('High fructose corn syrup') // a field the owner left open
    const provenance = (await get(`${PRODUCTS}/0041303003992/provenance`, org.key)).json
    expect(provenance.fields.product_name.map((c: any) => [c.source, c.value, c.canonical])).toEqual([
      ['open_food_facts', 'Barbecue Sauce, Original', false],
      ['claimed', 'Owner BBQ Sauce', true],
    ])
    // a source states one value a field at a time: the export's straight apostrophe replaced the dump's curly one
    expect((await product('3564703999971')).product_name).toBe("Huile d'olive")
    const olive = (await get(`${PRODUCTS}/3564703999971/provenance`, org.key)).json
    expect(olive.fields.product_name.map((c: any) => c.value)).toEqual(["Huile d'olive"])
  }, 90_000)

  test('USDA: a heavier source wins; agreeing sources raise confidence; the newer of two records wins', async () => {
    const run = await importFeed({ source: 'usda', path: 'usda' })
    expect(run).toMatchObject({ status: 'succeeded', format: 'usda_csv' })
    expect(run.counts).toMatchObject({ read: 19, rejected: 0 })
    const sprite = await product('0049000057980')
    // USDA (0.8) outweighs Open Food Facts (0.7) for the name; "SPRITE BOTTLE, 1.75 LITERS" reads as title case
    expect(sprite.product_name).toBe('Sprite Bottle, 1.75 Liters')
    expect(sprite.field_confidence.product_name).toBe(0.8)
    expect(sprite.data_source).toBe('usda_fdc')
    // the GLN suffix of the older record's owner is gone either way
    expect(sprite.manufacturer).toBe('The Coca-Cola Company')
    // both say 1.75 l: 1 - (1 - 0.8)(1 - 0.7) = 0.94
    const costenita = await product('0714444001218')
    expect(costenita.brand).toBe('Mi Costeñita') // agrees with "MI COSTENITA"; the accented form is kept
    expect(costenita.field_confidence.brand).toBe(0.94)
    // the JSON download says the same of the same products: nothing changes
    const json = await importFeed({ source: 'usda', path: 'usda/branded_sample.json' })
    expect(json).toMatchObject({ status: 'succeeded', format: 'usda_json', counts: { read: 10, rejected: 0 } })
    expect(json.counts.created).toBe(0)
  }, 90_000)
})

describe('affiliate feeds and offers', () => {
  let retailer: string
  beforeAll(async () => {
    const res = await post('/retailers/api/v1/retailers', { name: 'GreenBasket Market' }, org.key)
    retailer = res.json.id
  })

  const offerEvents = async () =>
    (await query<{ n: number }>(`select count(*)::int n from events where event_type = 'offer.updated'`))[0]!.n

  test('an uploaded merchant CSV (BOM, CRLF, quoted newline) becomes offers with offer.updated', async () => {
    const csv = readFileSync(join(feedDir, 'affiliate/google_merchant.csv'))
    const run = await importFeed(
      csv,
      org.key,
      'text/csv',
      `${RUNS}?source=affiliate&retailer_id=${retailer}&file_name=gm.csv`,
    )
    expect(run).toMatchObject({ status: 'succeeded', file: 'gm.csv', format: 'merchant_csv', retailer_id: retailer })
    expect(run.counts).toMatchObject({ read: 21, rejected: 1 })
    expect(run.rejected_sample[0]).toMatchObject({ line: 17, reason: expect.stringContaining('no gtin') })
    const offers = (await get(`${PRODUCTS}/025000044984/offers`, org.key)).json
    expect(offers.data).toEqual([
      expect.objectContaining({
        retailer_id: retailer,
        item_id: 'GB-10001',
        price: '3.49',
        regular_price: '3.49',
        currency: 'USD',
        availability: 'in_stock',
        multipack: null,
        url: 'https://www.greenbasket.example/p/simply-lemonade-all-natural-lemonade-52-fl-oz',
      }),
    ])
    // the sale of June 2025 is over: the regular price is asked
    const smoothie = (await get(`${PRODUCTS}/0071464240608/offers`, org.key)).json.data[0]
    expect(smoothie).toMatchObject({ price: '3.99', regular_price: '3.99' })
    expect(await offerEvents()).toBe(20)
    const [event] = await query(`select organization_id, data from events where event_type = 'offer.updated' limit 1`)
    expect(event!.data).toMatchObject({ retailer_id: retailer, currency: 'USD' })
  }, 90_000)

  test('the same feed again emits nothing; a changed price emits one offer.updated', async () => {
    const csv = readFileSync(join(feedDir, 'affiliate/google_merchant.csv'), 'utf8')
    const upload = (text: string) =>
      importFeed(text, org.key, 'text/csv', `${RUNS}?source=affiliate&retailer_id=${retailer}`)
    const again = await upload(csv)
    expect(again.counts).toMatchObject({ created: 0, updated: 0, unchanged: 20 })
    expect(await offerEvents()).toBe(20)
    const changed = await upload(csv.replace(',3.49 USD,', ',3.79 USD,'))
    expect(changed.counts).toMatchObject({ updated: 1, unchanged: 19 })
    expect(await offerEvents()).toBe(21)
    expect((await get(`${PRODUCTS}/025000044984/offers`, org.key)).json.data[0].price).toBe('3.79')
  }, 90_000)

  test('a TSV from the server folder: comma decimals, a multipack does not speak for the unit', async () => {
    const lumiere = (await post('/retailers/api/v1/retailers', { name: 'Épicerie Lumière' }, org.key)).json.id
    const run = await importFeed({ source: 'affiliate', path: 'affiliate/merchant_feed.tsv', retailer_id: lumiere })
    expect(run.counts).toMatchObject({ read: 20, rejected: 5 })
    const lines = run.rejected_sample.map((r: any) => r.line)
    expect(lines).toEqual([2, 3, 17, 18, 19])
    const picard = (await get(`${PRODUCTS}/3270160503070/offers?retailer_id=${lumiere}`, org.key)).json.data
    expect(picard).toEqual([expect.objectContaining({ item_id: 'EL-0005', price: '1.89', currency: 'EUR' })])
    // GB-10021 is a 6-pack sharing the bottle's GTIN: an offer of its own, no candidate values
    const gtin = '0049000057980'
    const offers = (await get(`${PRODUCTS}/${gtin}/offers?retailer_id=${retailer}`, org.key)).json.data
    expect(offers.map((o: any) => o.multipack).sort()).toEqual([6, null])
  }, 90_000)
})

describe('runs: access, bad input, failures', () => {
  test('any role reads its organization runs; another organization sees neither the run nor the list entry', async () => {
    const run = await importFeed({ source: 'usda', path: 'usda/branded_sample.json' }, org.key)
    expect((await get(`${RUNS}/${run.id}`, other.key)).status).toBe(404)
    const mine = (await get(RUNS, org.key)).json
    expect(mine.data.map((r: any) => r.id)).toContain(run.id)
    expect((await get(RUNS, other.key)).json.data).toEqual([])
    const readonly = await post(
      `/account/api/v1/organizations/${org.id}/api-keys`,
      { name: 'ro', role: 'readonly' },
      org.key,
    )
    const roKey = readonly.json.key
    // contract §4: every role reads its organization's runs; starting one needs a manager key
    if (roKey) expect((await get(RUNS, roKey)).status).toBe(200)
  }, 90_000)

  test('refused runs write nothing', async () => {
    const before = (await query<{ n: number }>('select count(*)::int n from feed_runs'))[0]!.n
    const refuse = async (body: unknown, status: number, field?: string) => {
      const res = await post(RUNS, body, org.key)
      expect(res.status).toBe(status)
      if (field) expect(res.json.errors.map((e: any) => e.field)).toContain(field)
    }
    await refuse({ source: 'off', path: '../../../etc/passwd' }, 422, 'path')
    await refuse({ source: 'off', path: 'off/missing.jsonl' }, 422, 'path')
    await refuse({ source: 'nope', path: 'off/products.jsonl' }, 422, 'source')
    await refuse({ source: 'affiliate', path: 'affiliate/merchant_feed.tsv' }, 422, 'retailer_id')
    await refuse({ source: 'off', path: 'off/products.jsonl', retailer_id: 'x' }, 422, 'retailer_id')
    const theirs = (await post('/retailers/api/v1/retailers', { name: 'Theirs' }, other.key)).json.id
    await refuse({ source: 'affiliate', path: 'affiliate/merchant_feed.tsv', retailer_id: theirs }, 404)
    expect((await call('POST', `${RUNS}?source=off`, { key: org.key, raw: '', type: 'application/gzip' })).status).toBe(
      422,
    )
    expect((await query<{ n: number }>('select count(*)::int n from feed_runs'))[0]!.n).toBe(before)
  })

  test('a truncated gzip fails the run with the reason; the chunks before the break are written', async () => {
    const whole = gzipSync(readFileSync(join(feedDir, 'off/products.jsonl')))
    const truncated = whole.subarray(0, Math.floor(whole.length * 0.7))
    const run = await importFeed(truncated, org.key, 'application/gzip', `${RUNS}?source=off&file_name=cut.jsonl.gz`)
    expect(run.status).toBe('failed')
    expect(run.error).toContain('truncated')
    expect(run.counts.read).toBeGreaterThan(0)
    expect(run.counts.read).toBeLessThan(45)
    // every chunk stored before the break gets written, and the products they hold are whole
    const chunks = Math.ceil(run.counts.read / 10)
    const done = await eventually(
      async () => {
        const n: number = (await get(`${RUNS}/${run.id}`, org.key)).json.progress.chunks_done
        return n >= chunks && n
      },
      30_000,
      `${chunks} chunks of run ${run.id} to be written`,
    )
    expect(done).toBe(chunks)
    expect((await get(`${RUNS}/${run.id}`, org.key)).json.status).toBe('failed')
  }, 90_000)

  test('a full dump tells which products disappeared since the last full import, and keeps them', async () => {
    const lines = readFileSync(join(feedDir, 'off/products.jsonl'), 'utf8').split('\n')
    writeFileSync(join(feedDir, 'off/partial.jsonl'), lines.slice(0, 40).join('\n'))
    const full = await importFeed({ source: 'off', path: 'off/products.jsonl', full: true })
    expect(full.disappeared).toEqual({ count: 0, sample: [] })
    const partial = await importFeed({ source: 'off', path: 'off/partial.jsonl', full: true })
    // lines 41-45 hold five valid products
    expect(partial.disappeared.count).toBe(5)
    expect(partial.disappeared.sample).toContain('03368954957557')
    expect((await product('3368954957557')).product_name).toBe("Bière blonde d'Abbaye Höellingem")
  }, 90_000)
})
