/** The GS1 mod-10 check digit of a digit string that lacks one (GS1 General Specifications §7.9). */
export function gs1CheckDigit(body: string): number {
  let sum = 0
  for (let i = body.length - 1, weight = 3; i >= 0; i--, weight = 4 - weight) sum += (body.charCodeAt(i) - 48) * weight
  return (10 - (sum % 10)) % 10
}

/** Whether the last digit of a GS1 key (GTIN, GLN, SSCC) is its correct check digit. */
export const hasValidCheckDigit = (key: string) =>
  /^\d{2,}$/.test(key) && gs1CheckDigit(key.slice(0, -1)) === Number(key.at(-1))
