// Catalog benchmark (issue 4): create 10,000 products through the API, then
// GET /products/api/v1/products/{gtin} at concurrency 64 for 10 s.
//   npm run bench:catalog -- [--products 10000] [--seconds 10] [--concurrency 64]
// HTTP load for the GET from wrk when installed (a Lua script spreads it over all GTINs),
// else from fetch in this process.
import { parseArgs } from 'node:util'
import { gs1CheckDigit } from '../../src/shared/gs1'
import { haveWrk, measure, measureWithWrk, pathsScript, printTable } from './load'
import { startBenchServer } from './server'

const { values } = parseArgs({
  options: {
    products: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '64' },
  },
})
const PRODUCTS = Number(values.products)
const SECONDS = Number(values.seconds)
const CONCURRENCY = Number(values.concurrency)

const bench = await startBenchServer()
const { createOrganization } = await import('../../src/accounts/organizations')
const { db } = await import('../../src/db/client')
const { api_key } = await createOrganization(db, { name: 'Bench Foods', owner_email: 'bench@example.test' })
const headers = { 'content-type': 'application/json', 'x-api-key': api_key.key }
const url = `${bench.base}/products/api/v1/products`

// GTIN-13s under GS1 prefix 400 (an ordinary range), each with its check digit.
const gtins = Array.from({ length: PRODUCTS }, (_, i) => {
  const body = `400${String(i).padStart(9, '0')}`
  return body + gs1CheckDigit(body)
})
const INGREDIENTS = 'Whole grain oats, sugar, palm oil, hazelnuts (4%), skimmed milk powder, salt. May contain soy.'

const progress = process.stdout.isTTY
  ? (done: number) => process.stdout.write(`\rcreating products: ${done}/${PRODUCTS}`)
  : (done: number) => done % 1000 === 0 && console.log(`creating products: ${done}/${PRODUCTS}`)

let next = 0
let created = 0
let failed = 0
const t0 = performance.now()
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (next < gtins.length) {
      const gtin = gtins[next++]!
      const res = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          gtin,
          product_name: `Granola ${gtin}`,
          net_content: '500 g',
          ingredients_text: INGREDIENTS,
        }),
      })
      await res.arrayBuffer()
      if (res.status === 201) created++
      else failed++
      progress(created + failed)
    }
  }),
)
const createSeconds = (performance.now() - t0) / 1000
if (process.stdout.isTTY) process.stdout.write('\n')

let i = 0
const getOne = () =>
  fetch(`${url}/${gtins[i++ % gtins.length]}`, { headers: { 'x-api-key': api_key.key } }).then(async (r) => {
    await r.arrayBuffer()
    return r.status === 200
  })
await measure('warm-up', CONCURRENCY, 1, getOne)

let get: Awaited<ReturnType<typeof measure>>
if (haveWrk()) {
  const script = pathsScript(
    'catalog',
    gtins.map((g) => `/products/api/v1/products/${g}`),
  )
  get = await measureWithWrk(
    'GET /products/{gtin}',
    `${url}/x`,
    CONCURRENCY,
    SECONDS,
    { 'x-api-key': api_key.key },
    script,
  )
} else {
  get = await measure('GET /products/{gtin}', CONCURRENCY, SECONDS, getOne)
}

console.log(
  `\n${created} products created in ${createSeconds.toFixed(1)} s: ${(created / createSeconds).toFixed(0)} creates/s (concurrency 16, ${failed} failed)`,
)
console.log(
  `GET at concurrency ${CONCURRENCY} for ${SECONDS} s, server log level ${bench.logLevel}, load from ${haveWrk() ? 'wrk' : 'fetch'}\n`,
)
printTable([get])
console.log(`\nGET p99: ${get.p99.toFixed(2)} ms (target < 25 ms)`)

await bench.stop()
process.exit(0)
