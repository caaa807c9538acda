import { beforeAll, describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import { runImport } from '../../../src/advertising/imports'
import { parseId } from '../../../src/shared/ids'
import { createOrganization, eventually, expectProblem, sql, type TestOrg } from '../../support/fixtures'
import { baseUrl, get, patch } from '../../support/server'
import { ADS, createCampaign, createRetailer, summary } from './support'

const IMPORTS = `${ADS}/performance/imports`

let org: TestOrg
let other: TestOrg
let retailer: string
beforeAll(async () => {
  ;[org, other] = await Promise.all([createOrganization(), createOrganization()])
  retailer = await createRetailer(org)
})

async function upload(body: string | Uint8Array, contentType: string, key = org.key, query = '') {
  const res = await fetch(`${baseUrl}${IMPORTS}${query}`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': contentType },
    body: body as BodyInit,
  })
  return { status: res.status, headers: res.headers, json: (await res.json()) as any }
}

/** Polls the import until it has finished. */
const finished = (id: string, key = org.key) =>
  eventually(async () => {
    const res = await get(`${IMPORTS}/${id}`, key)
    return res.json.status === 'succeeded' || res.json.status === 'failed' ? res.json : null
  })

describe('performance imports (CSV or JSON lines, a job)', () => {
  test('CSV: rows written, bad rows listed with their number and reason, totals updated; again: unchanged', async () => {
    const campaign = await createCampaign(org, retailer)
    const archived = await createCampaign(org, retailer)
    for (const status of ['active', 'completed', 'archived'])
      await patch(`${ADS}/campaigns/${archived.id}`, { status }, org.key)
    const foreign = await createCampaign(other, await createRetailer(other))
    const csv = [
      '\uFEFFcampaign_id,date,impressions,clicks,spend,source',
      `${campaign.id},2025-09-01,1000,10,2.50,`,
      `${campaign.id},2025-09-02,2000,30,7.25,dsp`,
      `${campaign.id},2025-09-03,500,0,0.10,`,
      `${campaign.id},2025-09-03,600,1,0.20,`, // same day and source as the row before: this one wins
      `${foreign.id},2025-09-01,1,1,1,`,
      `${archived.id},2025-09-01,1,1,1,`,
      `${campaign.id},2025-02-30,1,1,1,`,
      `${campaign.id},2025-09-04,1,1,1.5e2,`,
      `not-an-id,2025-09-04,1,1,1,`,
    ].join('\n')
    const res = await upload(csv, 'text/csv', org.key, '?file_name=september.csv')
    expect(res.status).toBe(202)
    expect(res.json).toMatchObject({ status: 'queued', file_name: 'september.csv', format: 'csv', source: 'import' })
    const done = await finished(res.json.id)
    expect(done).toMatchObject({
      status: 'succeeded',
      total: 9,
      processed: 9,
      progress: 100,
      counts: { created: 3, updated: 0, unchanged: 0, rejected: 6 },
      error: null,
    })
    expect(done.errors.map((e: { row: number; reason: string }) => [e.row, e.reason.split(' ')[0]])).toEqual([
      [3, 'superseded'],
      [5, 'no'],
      [6, 'the'],
      [7, 'date'],
      [8, 'spend'],
      [9, 'campaign_id'],
    ])
    expect(done.errors[0].reason).toBe('superseded by row 4 (same campaign, date and source)')
    expect((await summary(org, campaign.id)).totals).toMatchObject({ impressions: 3600, clicks: 41, spend: '9.95' })
    const rows = await sql(
      'select source, impressions::int from campaign_performance where campaign_id = $1 order by date',
      [parseId(campaign.id)],
    )
    expect(rows).toEqual([
      { source: 'import', impressions: 1000 },
      { source: 'dsp', impressions: 2000 },
      { source: 'import', impressions: 600 },
    ])
    expect(
      await sql('select count(*)::int n from campaign_performance where campaign_id = $1', [parseId(foreign.id)]),
    ).toEqual([{ n: 0 }])
    // the upload is gone once read
    expect(
      await sql('select count(*)::int n from performance_uploads where import_id = $1', [parseId(done.id)]),
    ).toEqual([{ n: 0 }])

    const again = await finished((await upload(csv, 'text/csv')).json.id)
    expect(again.counts).toEqual({ created: 0, updated: 0, unchanged: 3, rejected: 6 })
    expect((await summary(org, campaign.id)).totals).toMatchObject({ impressions: 3600, clicks: 41, spend: '9.95' })
  })

  test('gzip-compressed JSON lines; spend as a JSON number is refused with the reason', async () => {
    const campaign = await createCampaign(org, retailer)
    const lines = [
      { campaign_id: campaign.id, date: '2025-10-01', impressions: 10, clicks: 1, spend: '0.1' },
      { campaign_id: campaign.id, date: '2025-10-02', impressions: 10, clicks: 1, spend: '0.2', source: 'ssp' },
      { campaign_id: campaign.id, date: '2025-10-03', impressions: 10, clicks: 1, spend: 0.3 },
    ]
    const body = gzipSync(`${lines.map((l) => JSON.stringify(l)).join('\n')}\n{not json\n`)
    const res = await upload(body, 'application/gzip', org.key, '?source=ad-server')
    expect(res.status).toBe(202)
    expect(res.json.format).toBe('jsonl')
    const done = await finished(res.json.id)
    expect(done.counts).toEqual({ created: 2, updated: 0, unchanged: 0, rejected: 2 })
    expect(done.errors.map((e: { row: number }) => e.row)).toEqual([3, 4])
    expect(done.errors[0].reason).toContain('decimal string')
    expect(done.errors[1].reason).toBe('the line is not valid JSON')
    expect((await summary(org, campaign.id)).totals).toMatchObject({ impressions: 20, clicks: 2, spend: '0.30' })
    expect(
      await sql('select source from campaign_performance where campaign_id = $1 order by date', [parseId(campaign.id)]),
    ).toEqual([{ source: 'ad-server' }, { source: 'ssp' }])
  })

  test('a CSV without the required columns is 422 at once and queues nothing', async () => {
    const before = await sql('select count(*)::int n from performance_imports')
    const res = await upload('campaign,day,views\nx,2025-01-01,1\n', 'text/csv')
    expectProblem(res, 422, 'validation_error')
    expect(res.json.detail).toContain('campaign_id')
    expectProblem(await upload('', 'text/csv'), 422, 'validation_error')
    expectProblem(await upload(Buffer.from([0x1f, 0x8b, 1, 2, 3]), 'application/gzip'), 422, 'validation_error')
    expect(await sql('select count(*)::int n from performance_imports')).toEqual(before)
  })

  test("another organization's import is 404", async () => {
    const res = await upload('campaign_id,date,impressions,clicks,spend\n', 'text/csv')
    expect(res.status).toBe(202)
    expectProblem(await get(`${IMPORTS}/${res.json.id}`, other.key), 404, 'not_found')
  })

  test('a job that stopped after some chunks resumes after the last committed one, to the same result', async () => {
    const campaign = await createCampaign(org, retailer)
    // 250 rows: with 100-row chunks (the tests' PERFORMANCE_CHUNK_ROWS) that is three chunks
    const dates = Array.from({ length: 250 }, (_, i) => new Date(Date.UTC(2023, 0, 1 + i)).toISOString().slice(0, 10))
    const csv = [
      'campaign_id,date,impressions,clicks,spend',
      ...dates.map((d) => `${campaign.id},${d},10,1,0.01`),
    ].join('\n')
    const first = await finished((await upload(csv, 'text/csv')).json.id)
    expect(first.counts).toEqual({ created: 250, updated: 0, unchanged: 0, rejected: 0 })
    // the state a worker killed after chunk 1 leaves behind: chunk 1 committed, the rest not
    const id = parseId(first.id)!
    await sql(
      `delete from campaign_performance where campaign_id = $1 and date > '2023-04-10'`, // rows 101-250
      [parseId(campaign.id)],
    )
    await sql(
      `update performance_imports set status = 'running', chunks_done = 1, processed = 100, created_rows = 100,
         finished_at = null where id = $1`,
      [id],
    )
    await sql(`insert into performance_uploads (import_id, content) values ($1, $2)`, [id, Buffer.from(csv)])
    await runImport(id)
    const resumed = await get(`${IMPORTS}/${first.id}`, org.key)
    expect(resumed.json).toMatchObject({ status: 'succeeded', processed: 250, counts: first.counts })
    expect(
      await sql('select count(*)::int n from campaign_performance where campaign_id = $1', [parseId(campaign.id)]),
    ).toEqual([{ n: 250 }])
    expect((await summary(org, campaign.id)).totals).toMatchObject({ impressions: 2500, clicks: 250, spend: '2.50' })
  })
})
