import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'puppeteer-core'
import { isolatedChromium } from '../support/chromium'
import { ADMIN, uniqueGtin } from '../support/fixtures'
import { ownDatabase } from '../support/own-database'
import { ROOT, startServer } from '../support/process'
import { api } from '../support/server'

// The instant-search page in headless Chromium, driven over the DevTools protocol, against a
// server with a catalog of its own (so the rows are known). Only loopback is reachable.
const database = ownDatabase('demo')
let server: Awaited<ReturnType<typeof startServer>>
const chromium = await isolatedChromium()
let page: Page
const inFlight = new Set<unknown>()
let aborted = 0

const CATALOG = [
  { product_name: 'Dark Chocolate Bar', brand: 'Ombra', ingredients_text: 'cocoa mass, sugar, cocoa butter' },
  {
    product_name: 'Milk Chocolate Bar',
    brand: 'Ombra',
    ingredients_text: 'sugar, cocoa butter, whole milk powder, cocoa mass',
  },
  {
    product_name: 'Chocolate Hazelnut Spread',
    brand: 'Nocciola',
    ingredients_text: 'sugar, palm oil, hazelnuts, skimmed milk powder, cocoa',
  },
  { product_name: 'Choco Rice Crisps', brand: 'Chocomel', ingredients_text: 'rice, sugar, cocoa' },
  { product_name: 'Cashew Butter', brand: 'Nocciola', ingredients_text: 'cashews' },
  { product_name: 'Celery Soup', brand: 'Verdi', ingredients_text: 'water, celery, onion, salt' },
]

const { get, post } = api(() => server.url)

beforeAll(async () => {
  await database.create()
  server = await startServer({
    DATABASE_URL: database.url,
    ADMIN_TOKEN: ADMIN['x-admin-token'],
    SEARCH_ANONYMOUS_PER_MINUTE: '100000',
    LOG_LEVEL: 'warn',
  })
  const org = await post(
    '/account/api/v1/organizations',
    { name: 'Demo Foods', owner_email: 'o@demo.test' },
    undefined,
    ADMIN,
  )
  expect(org.status).toBe(201)
  const key: string = org.json.api_key.key
  for (const product of CATALOG)
    expect((await post('/products/api/v1/products', { gtin: uniqueGtin(), ...product }, key)).status).toBe(201)
  const shop = { name: 'Chocolate Corner', website: 'https://corner.example', is_canonical: true }
  expect((await post('/retailers/api/v1/retailers', shop, key, ADMIN)).status).toBe(201)

  const browser = await chromium.launch()
  page = chromium.watch(await browser.newPage())
  await page.setViewport({ width: 1100, height: 900 })
  const searches = (url: string) => url.includes('/catalog/api/v1/search?')
  page.on('request', (r) => searches(r.url()) && inFlight.add(r))
  page.on('requestfinished', (r) => inFlight.delete(r))
  page.on('requestfailed', (r) => {
    inFlight.delete(r)
    if (r.failure()?.errorText === 'net::ERR_ABORTED') aborted++
  })
  const loaded = await page.goto(`${server.url}/demo/search`)
  expect(loaded?.status()).toBe(200)
  expect(loaded?.headers()['content-type']).toBe('text/html; charset=utf-8')
}, 90_000)

afterAll(async () => {
  await chromium.close()
  server?.kill('SIGKILL')
  await database.drop()
})

const filters = () => page.$$eval('#filters input:checked', (boxes) => boxes.map((b) => [b.name, b.value]))

/** The query string the page sends for the text `q` with its checked filters. */
async function queryFor(q: string) {
  const params = new URLSearchParams({ q, limit: '20' })
  for (const [name, value] of await filters()) params.append(name!, value!)
  return params.toString()
}

/** Waits until the page shows the answer to `q` and nothing is pending; returns its rows. */
async function settled(q: string) {
  const query = await queryFor(q)
  await page.waitForFunction(
    (query) =>
      document.getElementById('results')!.dataset.query === query &&
      document.body.getAttribute('aria-busy') === 'false',
    { timeout: 10_000 },
    query,
  )
  const rows = await page.$$eval('#results .row', (items) =>
    items.map((li) => ({
      type: (li as HTMLElement).dataset.type,
      name: li.querySelector('.name')!.textContent,
      match: li.querySelector('.match')!.textContent,
      allergens: (li as HTMLElement).dataset.allergens ?? '',
    })),
  )
  return { query, rows }
}

/** What the service itself answers for the same query. */
const served = async (query: string) =>
  ((await get(`/catalog/api/v1/search?${query}`)).json.results as { type: string; name: string; match: string }[]).map(
    (r) => ({ type: r.type, name: r.name, match: r.match }),
  )

describe('/demo/search in headless Chromium', () => {
  test('typing choc letter by letter shows the matching rows after each keystroke, nothing left in flight', async () => {
    let typed = ''
    for (const letter of 'choc') {
      typed += letter
      await page.type('#q', letter)
      const { query, rows } = await settled(typed)
      expect(rows.length, typed).toBeGreaterThan(0)
      expect(rows.map(({ allergens: _, ...r }) => r)).toEqual(await served(query))
      expect(inFlight.size).toBe(0)
    }
    const { rows } = await settled('choc')
    const names = rows.map((r) => r.name)
    for (const name of ['Dark Chocolate Bar', 'Milk Chocolate Bar', 'Chocolate Hazelnut Spread', 'Choco Rice Crisps'])
      expect(names).toContain(name)
    expect(rows).toContainEqual(expect.objectContaining({ type: 'brand', name: 'Chocomel' }))
    expect(rows).toContainEqual(expect.objectContaining({ type: 'retailer', name: 'Chocolate Corner' }))
    expect(names).not.toContain('Cashew Butter')
    expect(new Set(rows.map((r) => r.match))).toEqual(new Set(['fulltext']))
  }, 60_000)

  test('toggling the milk allergen filter removes the rows that contain milk', async () => {
    const before = await settled('choc')
    const withMilk = before.rows.filter((r) => r.allergens.split(' ').includes('milk')).map((r) => r.name)
    expect(withMilk.sort()).toEqual(['Chocolate Hazelnut Spread', 'Milk Chocolate Bar'])
    await page.click('label.chip:has(input[name="exclude_allergens"][value="milk"])')
    const after = await settled('choc')
    expect(after.query).toContain('exclude_allergens=milk')
    expect(after.rows.filter((r) => r.allergens.split(' ').includes('milk'))).toEqual([])
    expect(after.rows.map((r) => r.name).sort()).toEqual(
      before.rows
        .map((r) => r.name)
        .filter((n) => !withMilk.includes(n))
        .sort(),
    )
    expect(after.rows.map(({ allergens: _, ...r }) => r)).toEqual(await served(after.query))
    expect(inFlight.size).toBe(0)

    const artifacts = join(ROOT, '.test-data', 'artifacts')
    mkdirSync(artifacts, { recursive: true })
    const file = join(artifacts, 'demo-search.png')
    await page.screenshot({ path: file as `${string}.png`, fullPage: true })
    expect(statSync(file).size).toBeGreaterThan(20_000)
  }, 60_000)

  test('on a slow network each keystroke aborts the request before it; only the last answer shows', async () => {
    const cdp = await page.createCDPSession()
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 600,
      downloadThroughput: -1,
      uploadThroughput: -1,
    })
    await page.click('#q', { count: 3 })
    await page.keyboard.press('Backspace')
    const abortedBefore = aborted
    await page.type('#q', 'cho', { delay: 250 }) // past the pause, before the answer
    const { rows } = await settled('cho')
    expect(aborted - abortedBefore).toBeGreaterThanOrEqual(1)
    expect(inFlight.size).toBe(0)
    expect(rows.map((r) => r.name)).toContain('Dark Chocolate Bar')
    expect(await page.$eval('#q', (i) => (i as HTMLInputElement).value)).toBe('cho')
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1,
    })
    expect(chromium.foreign).toEqual([])
  }, 60_000)
})
