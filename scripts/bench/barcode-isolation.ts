// Barcode work must not stall the API (issue 10): /healthz and a product GET are measured at
// concurrency 8, first idle, then while the worst-case batch export of the hostile-input probe
// and a heavy legitimate one (2,000 PNGs at 600 dpi) run in the same process (ROLE=all), and
// while 8 callers keep asking for the largest single symbols. Target: p99 under 50 ms throughout.
//   npm run bench:isolation -- [--seconds 10]
import { parseArgs } from 'node:util'
import { gs1CheckDigit } from '../../src/shared/gs1'
import { measure, printTable } from './load'
import { startBenchServer } from './server'

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' } } })
const SECONDS = Number(values.seconds)

const bench = await startBenchServer()
const { createOrganization } = await import('../../src/accounts/organizations')
const { createApiKey } = await import('../../src/accounts/api-keys')
const { db } = await import('../../src/db/client')
const { organization, api_key } = await createOrganization(db, { name: 'Isolation', owner_email: 'iso@example.test' })
const { parseId } = await import('../../src/shared/ids')
const readonly = (await createApiKey(db, parseId(organization.id)!, { name: 'probe', role: 'readonly' })).key
const manager = { 'content-type': 'application/json', 'x-api-key': api_key.key }
const probe = { 'content-type': 'application/json', 'x-api-key': readonly }

const gtin = `400${'1'.repeat(9)}`
const target = gtin + gs1CheckDigit(gtin)
await fetch(`${bench.base}/products/api/v1/products`, {
  method: 'POST',
  headers: manager,
  body: JSON.stringify({ gtin: target, product_name: 'Probe' }),
})

const health = () => fetch(`${bench.base}/healthz`).then((r) => r.ok)
const product = () =>
  fetch(`${bench.base}/products/api/v1/products/${target}`, { headers: { 'x-api-key': readonly } }).then((r) => r.ok)
const worst = {
  barcode_type: 'code128',
  format: 'png',
  module_width: 2,
  module_height: 100,
  quiet_zone: 20,
  dpi: 1200,
}
const startBatch = async (body: object, headers = probe) => {
  const res = await fetch(`${bench.base}/products/api/v1/barcode/batch/`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  })
  return ((await res.json()) as { id: string }).id
}
const status = async (id: string) =>
  (
    (await (
      await fetch(`${bench.base}/products/api/v1/barcode/batch/${id}/`, { headers: { 'x-api-key': readonly } })
    ).json()) as { status: string; completed: number; total: number }
  ).status

const results = [
  await measure('idle: GET /healthz', 8, SECONDS / 2, health),
  await measure('idle: GET /products/{gtin}', 8, SECONDS / 2, product),
]

const hostile = await startBatch({
  items: Array.from({ length: 30 }, (_, i) => ({ gtin: `${'A'.repeat(78)}${String(i).padStart(2, '0')}` })),
  output: 'zip',
  ...worst,
})
const heavy = await startBatch(
  {
    items: Array.from({ length: 2000 }, (_, i) => {
      const body = `400${String(i).padStart(9, '0')}`
      return { gtin: body + gs1CheckDigit(body) }
    }),
    output: 'zip',
    format: 'png',
    dpi: 600,
  },
  manager,
)
results.push(await measure('batches running: GET /healthz', 8, SECONDS / 2, health))
results.push(await measure('batches running: GET /products/{gtin}', 8, SECONDS / 2, product))
const singles = Array.from({ length: 8 }, async () => {
  const until = performance.now() + SECONDS * 1000
  let refused = 0
  while (performance.now() < until) {
    const res = await fetch(`${bench.base}/products/api/v1/barcode/`, {
      method: 'POST',
      headers: probe,
      body: JSON.stringify({ gtin: 'A'.repeat(80), ...worst }),
    })
    if (res.status === 422) refused++
    await res.arrayBuffer()
  }
  return refused
})
results.push(await measure('8 callers of the largest symbol: GET /healthz', 8, SECONDS / 2, health))
results.push(await measure('8 callers of the largest symbol: GET /products/{gtin}', 8, SECONDS / 2, product))
const refused = (await Promise.all(singles)).reduce((a, b) => a + b, 0)

printTable(results)
console.log(`\nhostile batch: ${await status(hostile)}; heavy batch (2,000 PNG at 600 dpi): ${await status(heavy)}`)
console.log(`largest single symbols refused with 422 (pixel cap): ${refused}`)
const worstP99 = Math.max(...results.map((r) => r.p99))
console.log(`worst p99 while barcode work runs: ${worstP99.toFixed(2)} ms (target < 50 ms)`)
await bench.stop()
process.exit(0)
