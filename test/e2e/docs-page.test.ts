import { afterAll, describe, expect, test } from 'bun:test'
import { mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { isolatedChromium } from '../support/chromium'
import { ROOT } from '../support/process'
import { baseUrl } from '../support/server'

// Every host but the service is blocked (test/support/chromium.ts): the page must render, and it
// must request nothing from another host (the page's own requests, not the browser's services).
const chromium = await isolatedChromium()
afterAll(() => chromium.close())
const artifacts = join(ROOT, '.test-data', 'artifacts')

let browser: Awaited<ReturnType<typeof chromium.launch>> | null = null
async function openDocs(width: number, height: number) {
  browser ??= await chromium.launch()
  const page = chromium.watch(await browser.newPage())
  await page.setViewport({ width, height })
  await page.goto(`${baseUrl}/docs`, { waitUntil: 'networkidle0', timeout: 60_000 })
  await page.waitForSelector('.opblock', { timeout: 30_000 })
  return page
}

describe('/docs, rendered in headless Chromium with every other host blocked', () => {
  test('shows the whole operation list', async () => {
    mkdirSync(artifacts, { recursive: true })
    const page = await openDocs(1280, 900)
    const dom = await page.content()
    // Swagger UI renders one .opblock per operation, with its path and summary
    const operations = dom.match(/class="opblock opblock-/g) ?? []
    expect(operations.length).toBeGreaterThanOrEqual(26)
    for (const summary of ['Create a product', 'Generate a 1D barcode', 'Start a batch export'])
      expect(dom).toContain(summary)
    expect(dom).toContain('/products/api/v1/products/{gtin}/claim')
    expect(chromium.foreign).toEqual([])
    await page.close()
  }, 90_000)

  test('a screenshot of the operation list is written to .test-data/artifacts/docs.png', async () => {
    const file = join(artifacts, 'docs.png')
    const page = await openDocs(1280, 2400)
    await page.screenshot({ path: file as `${string}.png` })
    expect(statSync(file).size).toBeGreaterThan(50_000) // a blank page is a few KB
    expect(chromium.foreign).toEqual([])
    await page.close()
  }, 90_000)
})
