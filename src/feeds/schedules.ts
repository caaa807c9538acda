import { readFile } from 'node:fs/promises'
import { Type as t } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { PgBoss } from 'pg-boss'
import { config } from '../config'
import { FEED_FORMATS, FEED_SOURCES } from '../db/schema/feeds'
import { parseId } from '../shared/ids'
import { Chars, Enum } from '../shared/schema-types'
import { Mapping } from './schemas'

/**
 * One scheduled import of the schedule file (FEED_SCHEDULE_FILE): a cron expression, in a time
 * zone, and where the feed is (a server path, or a URL downloaded at each run).
 */
export const ScheduledImport = t.Object(
  {
    /** unique in the file; the pg-boss schedule's key, and the name the downloads are filed under */
    name: t.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' }),
    /** five-field cron (minute hour day month weekday), as pg-boss schedules read it */
    cron: Chars(128, { minLength: 9 }),
    /** IANA zone the expression is read in (default UTC) */
    tz: t.Optional(Chars(64, { minLength: 1 })),
    source: Enum(FEED_SOURCES),
    format: t.Optional(Enum(FEED_FORMATS)),
    /** a server file: absolute, or relative to FEED_DIR */
    path: t.Optional(Chars(4096, { minLength: 1 })),
    /** an http(s) URL fetched at each run (https and public addresses only outside development) */
    url: t.Optional(Chars(2048, { pattern: '^https?://' })),
    /** shortuuid or UUID */
    retailer_id: t.Optional(Chars(36, { minLength: 1 })),
    /**
     * the organization that sees the runs through the API (default: none, as the CLI); the runs
     * stay the platform's, with the source's weight, never that organization's statement
     */
    organization_id: t.Optional(Chars(36, { minLength: 1 })),
    full: t.Optional(t.Boolean()),
    mapping: t.Optional(Mapping),
  },
  { additionalProperties: false },
)
export type ScheduledImport = typeof ScheduledImport.static

const ScheduleFile = t.Object(
  { imports: t.Array(ScheduledImport, { maxItems: 1000 }) },
  { additionalProperties: false },
)

/**
 * The entries of a schedule file, checked: the file's shape, unique names, exactly one of path or
 * url, well-formed ids, a retailer for affiliate feeds. Throws with every problem named.
 */
export async function loadSchedules(path: string): Promise<ScheduledImport[]> {
  let parsed: unknown
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'))
  } catch (err) {
    throw new Error(`schedule file ${path}: ${(err as Error).message}`)
  }
  const problems = Value.Check(ScheduleFile, parsed)
    ? []
    : [...Value.Errors(ScheduleFile, parsed)].map((e) => `${e.path || '/'}: ${e.message}`)
  // the entries' own checks run on every entry that is an object, beside the shape's problems
  const listed = (parsed as { imports?: unknown } | null)?.imports
  const entries = (Array.isArray(listed) ? listed : []) as ScheduledImport[]
  const seen = new Set<string>()
  entries.forEach((entry, i) => {
    if (typeof entry !== 'object' || entry === null) return
    const at = `/imports/${i} (${entry.name})`
    if (seen.has(entry.name)) problems.push(`${at}: the name is used twice`)
    seen.add(entry.name)
    if (!entry.path === !entry.url) problems.push(`${at}: give exactly one of path or url`)
    if (entry.source === 'affiliate' && !entry.retailer_id) problems.push(`${at}: an affiliate feed needs retailer_id`)
    if (entry.source !== 'affiliate' && (entry.retailer_id || entry.mapping))
      problems.push(`${at}: only affiliate feeds take retailer_id and mapping`)
    for (const key of ['retailer_id', 'organization_id'] as const)
      if (entry[key] && !parseId(String(entry[key]))) problems.push(`${at}: ${key} is not a shortuuid or UUID`)
    if (typeof entry.cron === 'string')
      try {
        nextFirings(entry, 1)
      } catch (err) {
        problems.push(`${at}: cron ${JSON.stringify(entry.cron)} in ${entry.tz ?? 'UTC'}: ${(err as Error).message}`)
      }
  })
  if (problems.length) throw new Error(`schedule file ${path}: ${problems.join('; ')}`)
  return entries
}

/** The pg-boss schedules the schedule file asks for, one per entry keyed by its name (none without a file). */
export async function feedSchedules() {
  const entries = config.FEED_SCHEDULE_FILE ? await loadSchedules(config.FEED_SCHEDULE_FILE) : []
  return entries.map((entry) => ({ key: entry.name, cron: entry.cron, tz: entry.tz ?? 'UTC', data: entry }))
}

// pg-boss reads expressions the same way without a connection; this instance is never started
let previewer: PgBoss | undefined

/** The next `count` moments an entry fires, as pg-boss will read its cron and zone (throws when it cannot). */
export function nextFirings(entry: Pick<ScheduledImport, 'cron' | 'tz'>, count: number, from = new Date()): Date[] {
  previewer ??= new PgBoss({ connectionString: 'postgres://preview.invalid/none' })
  return previewer.previewSchedule(entry.cron, { tz: entry.tz ?? 'UTC', count, from })
}
