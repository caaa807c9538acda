import type { BatchItem } from '../db/schema'
import { textProblem } from '../http/input-safety'
import { bodyChunks, inSlot, UPLOAD_LIMIT, type UploadBody } from '../http/upload'
import { invalidField } from '../shared/errors'
import { csvRows } from '../shared/text-records'
import { MAX_BATCH_ITEMS } from './batch-schemas'

/**
 * Items of a CSV upload (header row with `gtin` and optional `label`; rows counted from 1), read
 * as the body streams in: at most 20 MiB, and reading stops at the first row past MAX_BATCH_ITEMS,
 * so an oversized file costs no more than the rows a batch may have. The body is read in one of
 * `organizationId`'s upload slots (UPLOAD_CONCURRENCY), as every upload is.
 */
export const readBatchCsv = (body: UploadBody, organizationId: string): Promise<BatchItem[]> =>
  inSlot(organizationId, () => readItems(body))

async function readItems(body: UploadBody): Promise<BatchItem[]> {
  let fields: string[] | null = null
  const items: BatchItem[] = []
  const rows = csvRows(bodyChunks(body, UPLOAD_LIMIT, 'the limit of batch uploads'), {
    header: (h) => h.trim().toLowerCase(),
    onHeader: (names) => {
      fields = names
    },
  })
  for await (const read of rows) {
    if (read.problem !== undefined) throw invalidField('body', `row ${read.line - 1}: ${read.problem}`)
    if (items.length === MAX_BATCH_ITEMS)
      throw invalidField('body', `a batch takes at most ${MAX_BATCH_ITEMS} rows; this file has more`)
    const gtin = (read.row.gtin ?? '').trim()
    const label = read.row.label?.trim()
    for (const value of [gtin, label ?? '']) {
      const problem = textProblem(value, 'body')
      if (problem) throw invalidField('body', `row ${read.line - 1}: ${problem.message}`)
    }
    items.push({ gtin, ...(label ? { label: label.slice(0, 100) } : {}) })
  }
  if (!(fields as string[] | null)?.includes('gtin'))
    throw invalidField('body', 'the CSV needs a header row with a gtin column (and optionally label)')
  if (items.length === 0) throw invalidField('body', 'the CSV has no data rows')
  return items
}
