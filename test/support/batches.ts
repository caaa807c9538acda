import { gs1CheckDigit } from '../../src/shared/gs1'

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

/** Polls a batch until it succeeds or fails (or time runs out). */
export async function waitForBatch(base: string, id: string, key: string, ms = 60_000) {
  const until = Date.now() + ms
  for (;;) {
    const res = await fetch(`${base}${BATCH}${id}/`, { headers: { 'x-api-key': key } })
    const batch = (await res.json()) as {
      status: string
      completed: number
      errors: { row: number; input: string; reason: string }[]
      download_url: string
    }
    if (batch.status === 'succeeded' || batch.status === 'failed' || Date.now() > until) return batch
    await Bun.sleep(100)
  }
}
