/**
 * The GS1 mod-10 check digit of a digit string that lacks one (GS1 General Specifications §7.9);
 * of its first `length` digits when given, so that a key is checked without being cut.
 */
export function gs1CheckDigit(body: string, length = body.length): number {
  let sum = 0
  for (let i = length - 1, weight = 3; i >= 0; i--, weight = 4 - weight) sum += (body.charCodeAt(i) - 48) * weight
  return (10 - (sum % 10)) % 10
}

/** Whether the last of a string of digits is their GS1 check digit (the caller knows they are digits). */
export const checkDigitHolds = (digits: string) =>
  gs1CheckDigit(digits, digits.length - 1) === digits.charCodeAt(digits.length - 1) - 48

const KEY_DIGITS = /^\d{2,}$/
/** Whether the last digit of a GS1 key (GTIN, GLN, SSCC) is its correct check digit. */
export const hasValidCheckDigit = (key: string) => KEY_DIGITS.test(key) && checkDigitHolds(key)
