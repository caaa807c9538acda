import { resolve } from 'node:path'
import { type Command, Option } from 'commander'
import { FEED_FORMATS } from '../../src/db/schema/feeds'
import { exits, unreadable } from './command'
import { withDatabase } from './database'
import { progressReporter } from './progress'

type ImportOptions = {
  source: 'off' | 'usda' | 'affiliate'
  file: string
  retailer?: string
  full?: boolean
  format?: (typeof FEED_FORMATS)[number]
  json?: boolean
}

export function feedsCommands(program: Command) {
  const feeds = program.command('feeds').description('feed imports')
  feeds
    .command('schedules')
    .description('check a schedule file (default FEED_SCHEDULE_FILE) and print when each import fires next')
    .option('--file <path>', 'the schedule file')
    .option('--count <n>', 'firings to show per import', '3')
    .action(exits(showSchedules))
  feeds
    .command('import')
    .description(
      "import a feed file as the platform (its values carry the source's weight) through the pg-boss pipeline and print the run counts (exit 1 when it failed)",
    )
    .addOption(
      new Option('--source <source>', 'where the file comes from')
        .choices(['off', 'usda', 'affiliate'])
        .makeOptionMandatory(),
    )
    .requiredOption('--file <path>', 'the file (gzip allowed)')
    .option('--retailer <id>', 'the retailer whose offers an affiliate feed carries')
    .option('--full', 'a full dump: report the products that disappeared since the last full import')
    .addOption(new Option('--format <format>', 'the file format, when the name does not tell').choices(FEED_FORMATS))
    .option('--json', 'print the run as JSON')
    .action(exits(importFeed))
}

/**
 * `feeds import`: records a run and works it through the same pg-boss jobs as the server (this
 * process binds the feed workers; a running server's workers help), with a progress bar, then
 * prints the counts (or the run as JSON with --json). Exit 1 when the run failed.
 */
async function importFeed(values: ImportOptions): Promise<number> {
  // the USDA CSV download is a folder of files; every other feed is one file
  const problem = unreadable(values.file, values.source === 'usda')
  if (problem) {
    console.error(problem)
    return 2
  }
  const { features } = await import('../../src/features')
  const { createQueues, startWorker, workersOf } = await import('../../src/runtime')
  const { chunkQueue, importQueue } = await import('../../src/feeds/queues')
  const { createRun, getRun } = await import('../../src/feeds/runs')
  const { parseId } = await import('../../src/shared/ids')
  const retailerId = values.retailer ? parseId(values.retailer) : null
  if (values.retailer && !retailerId) {
    console.error('--retailer must be a retailer id (shortuuid or UUID)')
    return 2
  }
  return withDatabase(4, 'work', async (database, boss) => {
    const workers = workersOf(features)
    await createQueues(workers)
    // this process reads the file and writes its chunks with the feeds feature's own workers
    for (const worker of workers)
      if (worker.queue.name === importQueue.name || worker.queue.name === chunkQueue.name)
        await startWorker(boss!, worker)
    // no organization: the operator's run is the platform's, as with the admin token
    const created = await createRun(database.db, null, {
      source: values.source,
      format: values.format,
      path: resolve(values.file),
      retailerId,
      full: values.full,
    })
    const runId = parseId(created.id)!
    const progress = await progressReporter(0, `importing ${values.file}`)
    let run = created
    while (run.status === 'queued' || run.status === 'running') {
      await Bun.sleep(250)
      run = await getRun(database.db, null, runId)
      progress.update(run.progress.rows_written, run.progress.rows_total ?? 0)
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
  })
}

/** `feeds schedules`: the file checked as a worker checks it, and each entry's next firings (exit 1 when invalid). */
async function showSchedules(values: { file?: string; count: string }): Promise<number> {
  const { config } = await import('../../src/config')
  const { loadSchedules, nextFirings } = await import('../../src/feeds/schedules')
  const file = values.file ?? config.FEED_SCHEDULE_FILE
  const count = Number(values.count)
  if (!file) {
    console.error('no schedule file: pass --file or set FEED_SCHEDULE_FILE')
    return 2
  }
  if (!Number.isInteger(count) || count < 1 || count > 100) {
    console.error('--count must be a whole number from 1 to 100')
    return 2
  }
  const problem = unreadable(file)
  if (problem) {
    console.error(problem)
    return 1
  }
  let entries: Awaited<ReturnType<typeof loadSchedules>>
  try {
    entries = await loadSchedules(file)
  } catch (err) {
    console.error((err as Error).message)
    return 1
  }
  for (const entry of entries) {
    console.log(
      `${entry.name}: ${entry.source} from ${entry.url ?? entry.path}, "${entry.cron}" in ${entry.tz ?? 'UTC'}`,
    )
    for (const at of nextFirings(entry, count)) console.log(`  ${at.toISOString()}`)
  }
  if (entries.length === 0) console.log('no imports scheduled')
  return 0
}
