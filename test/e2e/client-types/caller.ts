// A caller of the package, type-checked by test/e2e/type-checks.test.ts: it must pass `tsc --noEmit`
// as written, and fail once the `@ts-expect-error` lines are removed (the misspelled fields are
// then plain errors). If the client's types were `any`, the expect-error lines would fail instead.
import { createClient } from 'gtin-catalog'

const api = createClient('http://localhost:3000', { apiKey: 'gck_live_example' })

export async function productName(gtin: string): Promise<string | null> {
  const { data, error } = await api.products.api.v1.products({ gtin }).get()
  if (error) {
    const code: string = error.value.code
    return code
  }
  // @ts-expect-error misspelled response field
  const misspelled = data.product_nmae
  void misspelled
  return data.product_name
}

export async function firstRow(q: string) {
  const { data } = await api.catalog.api.v1.search.get({ query: { q, limit: 5 } })
  // @ts-expect-error misspelled response field
  void data?.results[0]?.rnak
  return data?.results[0]?.rank ?? 0
}

export async function campaignCtr(campaignId: string): Promise<string | undefined> {
  const { data } = await api.advertising.api.v1.reporting.campaigns({ campaign_id: campaignId }).summary.get()
  // @ts-expect-error misspelled response field
  void data?.totals.crt
  return data?.totals.ctr
}
