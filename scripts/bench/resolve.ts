// Resolver benchmark (issue 15): 10,000 products with 50,000 resolution rules, then
// GET /01/{gtin} (with and without lot and serial, some with a linkType) at concurrency 64 against
// the bare no-op route of the same server, both in this run.
//   npm run bench:resolve -- [--seconds 10] [--concurrency 64] [--products 10000]
// Targets: p99 under 10 ms, and at least 50 % of the bare route's requests per second.
// A throwaway embedded PostgreSQL; load from wrk when installed (apt-get install wrk), else fetch.
// With two CPUs or more, the server and wrk each run on a CPU of their own (`cpuPinning`), both
// routes alike: on shared cores the load generator's own delays show up as the server's p99.
import { parseArgs } from 'node:util'
import { cpuPinning, haveWrk, measure, measureWithWrk, pathsScript, printTable } from './load'
import { startBenchServer } from './server'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '64' },
    products: { type: 'string', default: '10000' },
  },
})
const SECONDS = Number(values.seconds)
const CONCURRENCY = Number(values.concurrency)
const PRODUCTS = Number(values.products)
const RULES_PER_PRODUCT = 5

const pinning = cpuPinning()
const bench = await startBenchServer(2, undefined, pinning.server)
const { createOrganization } = await import('../../src/accounts/organizations')
const { db } = await import('../../src/db/client')
const { sql } = await import('drizzle-orm')
const { gs1CheckDigit } = await import('../../src/shared/gs1')
const { parseId } = await import('../../src/shared/ids')
const say = (line: string) => console.log(`[bench] ${line}`)

const { organization, api_key } = await createOrganization(db, {
  name: 'Resolver bench',
  owner_email: 'r@example.test',
})
const orgId = parseId(organization.id)!

say(
  `seeding ${PRODUCTS.toLocaleString('en')} products and ${(PRODUCTS * RULES_PER_PRODUCT).toLocaleString('en')} rules`,
)
const gtins = Array.from({ length: PRODUCTS }, (_, i) => {
  const body = `0${401_234_500_000 + i}`
  return `${body}${gs1CheckDigit(body)}`
})
await db.execute(sql`insert into brands (name, organization_id)
  select 'Bench brand ' || n, ${orgId}::uuid from generate_series(0, 99) n`)
await db.execute(sql`insert into products (gtin, product_name, owner_id, brand_id, data_source)
  select g, 'Bench product ' || i, ${orgId}::uuid,
         (select id from brands where name = 'Bench brand ' || (i % 100) and organization_id = ${orgId}::uuid),
         'claimed'
  from unnest(${sql.raw(`array[${gtins.map((g) => `'${g}'`).join(',')}]`)}::text[]) with ordinality as t(g, i)`)
// five rules a product, the conditions of real campaigns: a weekday-hours default, a weekend
// default in some states, a product page, a lot recall and one serialised item
await db.execute(sql`insert into resolution_rules
    (organization_id, scope_type, scope_id, product_id, order_index, days_of_week, time_of_day_start,
     time_of_day_end, timezone, link_type, location_countries, location_regions, custom_url)
  select ${orgId}::uuid, r.scope_type, coalesce(r.scope_value, p.id::text), p.id, r.order_index, r.days::smallint[],
         r.t0, r.t1, 'America/Los_Angeles', r.link_type, r.countries::text[], r.regions::text[],
         'https://brand.example/' || p.gtin || '/' || r.slug
  from products p
  cross join (values
    ('PRODUCT', null, 0, '{6,7}', null, null, 'gs1:defaultLink', '{US}', '{US-CA,US-NV}', 'weekend'),
    ('PRODUCT', null, 1, '{}', '08:00', '20:00', 'gs1:defaultLink', '{}', '{}', 'day'),
    ('PRODUCT', null, 2, '{}', null, null, 'gs1:pip', '{}', '{}', 'pip'),
    ('BATCH', 'L1', 0, '{}', null, null, 'gs1:defaultLink', '{}', '{}', 'recall'),
    ('SERIAL', 'S1', 0, '{}', null, null, 'gs1:defaultLink', '{}', '{}', 'serial')
  ) as r(scope_type, scope_value, order_index, days, t0, t1, link_type, countries, regions, slug)
  where p.owner_id = ${orgId}::uuid`)
await db.execute(sql`insert into resolution_rules (organization_id, scope_type, scope_id, order_index, custom_url)
  values (${orgId}::uuid, 'ORGANIZATION', ${orgId}::text, 9, 'https://brand.example/')`)

const paths = gtins.flatMap((g, i) => {
  const list = [`/01/${g}`, `/01/${g}?utm_source=pack`]
  if (i % 4 === 0) list.push(`/01/${g}/10/L1`, `/01/${g}/10/L1/21/S1`, `/01/${g}?linkType=gs1:pip`)
  return list
})
for (const path of [paths[0]!, paths[2]!, `${paths[0]}/10/L1`])
  if ((await fetch(bench.base + path, { redirect: 'manual' })).status !== 307)
    throw new Error(`${path} does not redirect`)
const key = { 'x-api-key': api_key.key }
const script = pathsScript('resolve', paths)
const wrk = haveWrk()
let n = 0
const fetchOnce = (path: () => string, status: number) => () =>
  fetch(bench.base + path(), { headers: key, redirect: 'manual' }).then(async (r) => {
    await r.arrayBuffer()
    return r.status === status
  })
const statements = async () => {
  const { rows } = await bench.database.db.$client.query(
    'select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()',
  )
  return Number(rows[0].n)
}
const perRequest = new Map<string, { cpuUs: number; transactions: number }>()
/** One load run; also notes the server's CPU time and database transactions per request. */
async function run(name: string, url: string, lua: string | undefined, once: () => Promise<boolean>) {
  const [cpu, transactions] = [bench.cpuSeconds(), await statements()]
  const result = wrk
    ? await measureWithWrk(name, url, CONCURRENCY, SECONDS, key, lua, pinning.load)
    : await measure(name, CONCURRENCY, SECONDS, once)
  const requests = Math.max(1, result.requests)
  perRequest.set(name.split(' (')[0]!, {
    cpuUs: ((bench.cpuSeconds() - cpu) / requests) * 1e6,
    transactions: ((await statements()) - transactions) / requests,
  })
  return result
}

say('warming up')
await measure(
  'warm-up',
  CONCURRENCY,
  2,
  fetchOnce(() => paths[n++ % paths.length]!, 307),
)
say('measuring the bare route')
const bare = await run(
  'GET /healthz (bare no-op route)',
  `${bench.base}/healthz`,
  undefined,
  fetchOnce(() => '/healthz', 200),
)
say('measuring the resolver')
const resolve = await run(
  'GET /01/{gtin}[/10/{lot}[/21/{serial}]] (307)',
  bench.base,
  script,
  fetchOnce(() => paths[n++ % paths.length]!, 307),
)

console.log(
  `\n${PRODUCTS.toLocaleString('en')} products, ${(PRODUCTS * RULES_PER_PRODUCT + 1).toLocaleString('en')} rules; concurrency ${CONCURRENCY}, ${SECONDS} s each; load from ${wrk ? `wrk (1 thread; ${pinning.note})` : 'fetch in this process'}; keyed requests (no anonymous limit)\n`,
)
printTable([bare, resolve])
console.log('\nper request (server process CPU time; transactions of the whole database, background jobs included):')
for (const [name, { cpuUs, transactions }] of perRequest)
  console.log(`  ${name}: ${cpuUs.toFixed(0)} µs CPU, ${transactions.toFixed(4)} transactions`)
const share = resolve.rps / bare.rps
const met = resolve.errors === 0 && resolve.p99 < 10 && share >= 0.5
console.log(
  `\nresolver: ${(share * 100).toFixed(0)} % of the bare route's req/s (target >= 50 %), p99 ${resolve.p99.toFixed(2)} ms (target < 10 ms), ${resolve.errors} errors: targets ${met ? 'met' : 'NOT met'}`,
)
await bench.stop()
