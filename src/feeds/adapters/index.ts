import { stat } from 'node:fs/promises'
import type { FEED_FORMATS, FEED_SOURCES } from '../../db/schema/feeds'
import { affiliateFeed, type ColumnMapping } from './affiliate'
import { type InflateLimits, openInput } from './input'
import { offCsv, offJsonl } from './off'
import type { FeedRow } from './record'
import { usdaCsv, usdaJson } from './usda'

export type FeedSource = (typeof FEED_SOURCES)[number]
export type FeedFormat = (typeof FEED_FORMATS)[number]

/** The catalog's data_source of each feed source (its weight is SOURCE_CONFIDENCE's). */
export const DATA_SOURCE_OF = {
  off: 'open_food_facts',
  usda: 'usda_fdc',
  affiliate: 'affiliate_feed',
} as const satisfies Record<FeedSource, string>

export type FeedSpec = {
  format: FeedFormat
  path: string
  mapping?: ColumnMapping
  /** when the feed was observed (an affiliate sale price applies at this time) */
  observedAt: Date
  /** how far a gzip file may expand (default: the ratio limit alone) */
  limits?: InflateLimits
}

/** The first non-blank character of a file (decompressed), to tell JSON from CSV. */
async function firstCharacter(path: string): Promise<string> {
  const stream = await openInput(path)
  try {
    for await (const chunk of stream) {
      const s = new TextDecoder()
        .decode(chunk as Uint8Array)
        .replace(/^\uFEFF/, '')
        .trimStart()
      if (s) return s[0]!
    }
    return ''
  } finally {
    stream.destroy()
  }
}

/** The format of a file of a source: a folder is the USDA CSV download; a JSON file starts with "{". */
export async function detectFormat(source: FeedSource, path: string): Promise<FeedFormat> {
  if (source === 'affiliate') return 'merchant_csv'
  if ((await stat(path)).isDirectory()) return 'usda_csv'
  const json = (await firstCharacter(path)) === '{'
  if (source === 'off') return json ? 'off_jsonl' : 'off_csv'
  return json ? 'usda_json' : 'usda_csv'
}

/** The rows of a feed file, read by its format's adapter; `onBytes` counts the file's bytes as read. */
export async function* readFeed(spec: FeedSpec, onBytes?: (n: number) => void): AsyncGenerator<FeedRow> {
  switch (spec.format) {
    case 'off_jsonl':
      return yield* offJsonl(await openInput(spec.path, onBytes, spec.limits))
    case 'off_csv':
      return yield* offCsv(await openInput(spec.path, onBytes, spec.limits))
    case 'usda_csv':
      return yield* usdaCsv(spec.path)
    case 'usda_json':
      return yield* usdaJson(spec.path, spec.limits)
    case 'merchant_csv':
      return yield* affiliateFeed(await openInput(spec.path, onBytes, spec.limits), {
        mapping: spec.mapping,
        observedAt: spec.observedAt,
      })
  }
}

/** The size of a feed (a folder: its files together), for progress. */
export async function feedSize(path: string): Promise<number> {
  const info = await stat(path)
  if (!info.isDirectory()) return info.size
  let total = 0
  for (const name of ['food.csv', 'branded_food.csv'])
    total += (await stat(`${path}/${name}`).catch(() => ({ size: 0 }))).size
  return total
}
