import { afterAll, describe, expect, test } from 'bun:test'
import { mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { isolatedChromium } from '../support/chromium'
import { ROOT } from '../support/process'
import { baseUrl } from '../support/server'

// Every host but the service is blocked (test/support/chromium.ts): the page must render with
// nothing recorded.
const chromium = await isolatedChromium()
const attempted = chromium.attempted
afterAll(() => chromium.close())
const artifacts = join(ROOT, '.test-data', 'artifacts')

describe('/docs, rendered in headless Chromium with every other host blocked', () => {
  test('shows the whole operation list', async () => {
    mkdirSync(artifacts, { recursive: true })
    const dom = await chromium.run(['--dump-dom', `${baseUrl}/docs`])
    // Swagger UI renders one .opblock per operation, with its path and summary
    const operations = dom.match(/class="opblock opblock-/g) ?? []
    expect(operations.length).toBeGreaterThanOrEqual(26)
    for (const summary of ['Create a product (spec #11)', 'Generate a 1D barcode (spec #8)', 'Start a batch export'])
      expect(dom).toContain(summary)
    expect(dom).toContain('/products/api/v1/products/{gtin}/claim')
    expect(attempted).toEqual([])
  }, 90_000)

  test('a screenshot of the operation list is written to .test-data/artifacts/docs.png', async () => {
    const file = join(artifacts, 'docs.png')
    await chromium.run(['--window-size=1280,2400', `--screenshot=${file}`, `${baseUrl}/docs`])
    expect(statSync(file).size).toBeGreaterThan(50_000) // a blank page is a few KB
    expect(attempted).toEqual([])
  }, 90_000)
})
