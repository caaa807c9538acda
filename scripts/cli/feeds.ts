import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { progressReporter } from './progress'

export const feedsUsage = `usage: cli feeds import --source off|usda|affiliate --file PATH [--retailer ID] [--full]
         [--format off_jsonl|off_csv|usda_csv|usda_json|merchant_csv] [--json]`

/**
 * `feeds import`: records a run and works it through the same pg-boss jobs as the server (this
 * process binds the feed workers; a running server's workers help), with a progress bar, then
 * prints the counts (or the run as JSON with --json). Exit 1 when the run failed.
 */
export async function feedsCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv
  const { values } = parseArgs({
    args: rest,
    options: {
      source: { type: 'string' },
      file: { type: 'string' },
      retailer: { type: 'string' },
      full: { type: 'boolean', default: false },
      format: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  })
  const sources = ['off', 'usda', 'affiliate']
  if (sub !== 'import' || !values.source || !sources.includes(values.source) || !values.file) {
    console.error(feedsUsage)
    return 2
  }
  const { config } = await import('../../src/config')
  const { openDatabase } = await import('../../src/runtime')
  const { startBoss, stopBoss } = await import('../../src/db/boss')
  const { createQueues } = await import('../../jobs')
  const { bind } = await import('../../jobs/binding')
  const { feedsChunk, feedsImport } = await import('../../jobs/feeds')
  const { createRun, getRun } = await import('../../src/ingestion/runs')
  const { parseId } = await import('../../src/shared/ids')
  const { FEED_FORMATS } = await import('../../src/db/schema/feeds')
  if (values.format && !(FEED_FORMATS as readonly string[]).includes(values.format)) {
    console.error(`--format must be one of ${FEED_FORMATS.join(', ')}`)
    return 2
  }
  const retailerId = values.retailer ? parseId(values.retailer) : null
  if (values.retailer && !retailerId) {
    console.error('--retailer must be a retailer id (shortuuid or UUID)')
    return 2
  }
  const database = await openDatabase(config, 4)
  const boss = await startBoss(database.url, true)
  try {
    await createQueues()
    await bind(boss, feedsImport)
    await bind(boss, feedsChunk)
    const created = await createRun(database.db, null, {
      source: values.source as 'off',
      format: values.format as never,
      path: resolve(values.file),
      retailerId,
      full: values.full,
    })
    const runId = parseId(created.id)!
    const progress = await progressReporter(100, `importing ${values.file}`)
    let run = created
    while (run.status === 'queued' || run.status === 'running') {
      await Bun.sleep(250)
      run = await getRun(database.db, null, runId)
      progress.update(run.progress.percent)
    }
    progress.stop()
    if (values.json) console.log(JSON.stringify(run))
    else {
      const c = run.counts
      console.log(
        `${run.status}: read ${c.read}, created ${c.created}, updated ${c.updated}, unchanged ${c.unchanged}, rejected ${c.rejected}`,
      )
      for (const r of run.rejected_sample) console.log(`  line ${r.line}: ${r.reason}`)
      if (run.disappeared) console.log(`disappeared since the last full import: ${run.disappeared.count}`)
      if (run.error) console.log(`error: ${run.error}`)
    }
    return run.status === 'succeeded' ? 0 : 1
  } finally {
    await stopBoss()
    await database.close()
  }
}
