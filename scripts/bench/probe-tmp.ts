import { startBenchServer } from './server'

const bench = await startBenchServer(4)
const { createOrganization } = await import('../../src/accounts/organizations')
const { createRetailer } = await import('../../src/retailers/retailers')
const { createCampaign } = await import('../../src/advertising/campaigns')
const { db } = await import('../../src/db/client')
const { sql } = await import('drizzle-orm')
const { transaction } = await import('../../src/db/tx')
const { arrayParam } = await import('../../src/db/params')
const { parseId } = await import('../../src/shared/ids')
const { parseImport } = await import('../../src/advertising/import-file')
const { upsertPerformance } = await import('../../src/advertising/performance')
const { organization } = await createOrganization(db, { name: 'A', owner_email: 'a@example.test' })
const orgId = parseId(organization.id)!
const retailer = await createRetailer(db, orgId, { name: 'S' }, false)
const mk = async () => {
  const ids: string[] = []
  for (let c = 0; c < 50; c++)
    ids.push(
      (
        await createCampaign(db, orgId, {
          name: `C${c}`,
          retailer_id: parseId(retailer.id)!,
          budget: '1',
          pricing_model: 'CPC',
          rate: '1',
        })
      ).id,
    )
  return ids
}
const dates = Array.from({ length: 365 }, (_, d) => new Date(Date.UTC(2025, 0, 1 + d)).toISOString().slice(0, 10))
const rowsFor = (ids: string[]) =>
  parseImport(
    [
      'campaign_id,date,impressions,clicks,spend',
      ...ids.flatMap((id, c) =>
        dates.map((date, d) => {
          const i = 1000 + ((c * 7919 + d * 104729) % 9000)
          return `${id},${date},${i},${i % 97},${(i * 0.00131).toFixed(6)}`
        }),
      ),
    ].join('\n'),
    'csv',
    'import',
  ).map((r) => r.value!)
for (let k = 0; k < 2; k++) {
  let rows = rowsFor(await mk())
  let t = performance.now()
  await transaction((tx) => upsertPerformance(tx, rows))
  console.log('upsert+totals', (performance.now() - t).toFixed(0))
  rows = rowsFor(await mk())
  t = performance.now()
  await db.execute(
    sql`insert into campaign_performance (campaign_id, date, source, impressions, clicks, spend) select * from unnest(${arrayParam(
      rows.map((r) => r.campaignId),
      'uuid',
    )}, ${arrayParam(
      rows.map((r) => r.date),
      'date',
    )}, ${arrayParam(
      rows.map((r) => r.source),
      'text',
    )}, ${arrayParam(
      rows.map((r) => r.impressions),
      'int8',
    )}, ${arrayParam(
      rows.map((r) => r.clicks),
      'int8',
    )}, ${arrayParam(
      rows.map((r) => r.spend),
      'numeric',
    )})`,
  )
  console.log('plain insert unnest', (performance.now() - t).toFixed(0))
  rows = rowsFor(await mk())
  t = performance.now()
  await db.execute(
    sql`insert into campaign_performance (campaign_id, date, source, impressions, clicks, spend) select * from unnest(${arrayParam(
      rows.map((r) => r.campaignId),
      'uuid',
    )}, ${arrayParam(
      rows.map((r) => r.date),
      'date',
    )}, ${arrayParam(
      rows.map((r) => r.source),
      'text',
    )}, ${arrayParam(
      rows.map((r) => r.impressions),
      'int8',
    )}, ${arrayParam(
      rows.map((r) => r.clicks),
      'int8',
    )}, ${arrayParam(
      rows.map((r) => r.spend),
      'numeric',
    )}) on conflict do nothing`,
  )
  console.log('insert on conflict do nothing', (performance.now() - t).toFixed(0))
}
await bench.stop()
