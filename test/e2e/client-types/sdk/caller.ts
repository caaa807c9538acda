// A ten-line caller of the SDK, type-checked by test/e2e/type-checks.test.ts (and timed in the README).
import { createSdk } from 'gtin-catalog/sdk'

const sdk = createSdk({ baseUrl: 'http://localhost:3000', apiKey: 'gck_live_example' })
export async function names(): Promise<string[]> {
  const product = await sdk.catalog.products.retrieve('4006381333931')
  // @ts-expect-error misspelled response field
  void product.product_nmae
  const names = [product.product_name]
  for await (const page of sdk.catalog.products.list({ claimed: 'true' })) names.push(...page.data.map((p) => p.gtin))
  // @ts-expect-error misspelled query parameter
  sdk.catalog.products.list({ claimd: 'true' })
  return names
}
