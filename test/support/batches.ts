import { gs1CheckDigit } from '../../src/shared/gs1'
import { eventually } from './eventually'

export const BATCH = '/products/api/v1/barcode/batch/'

/** n GTIN-13s with optional labels; every 100th (rows 8, 108, …) has a wrong check digit. */
export function batchItems(n: number, seed: number) {
  return Array.from({ length: n }, (_, i) => {
    const body = `40${String(seed).padStart(3, '0')}${String(i).padStart(7, '0')}`
    const check = gs1CheckDigit(body)
    return {
      gtin: `${body}${i % 100 === 7 ? (check + 1) % 10 : check}`,
      ...(i % 5 === 0 ? { label: `Item ${i}` } : {}),
    }
  })
}

type Batch = {
  status: string
  completed: number
  errors: { row: number; input: string; reason: string }[]
  download_url: string
}

/** Polls a batch until it succeeds or fails; throws if it has done neither within `ms`. */
export async function waitForBatch(base: string, id: string, key: string, ms = 60_000) {
  return eventually(
    async () => {
      const res = await fetch(`${base}${BATCH}${id}/`, { headers: { 'x-api-key': key } })
      const batch = (await res.json()) as Batch
      return (batch.status === 'succeeded' || batch.status === 'failed') && batch
    },
    ms,
    `batch ${id} to finish`,
  )
}
