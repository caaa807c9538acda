import { Chars } from './schema-types'

/** The spec's pattern for every decimal string ("Decimal strings match …"). */
export const SPEC_DECIMAL = '^(?!^[-+.]*$)[+-]?0*\\d*\\.?\\d*$'

/** A numeric as the API writes money: at least two decimals, no trailing zeros beyond them. */
export function decimalString(value: string): string {
  const [whole, fraction = ''] = value.split('.')
  const trimmed = fraction.replace(/0+$/, '').padEnd(2, '0')
  return `${whole}.${trimmed}`
}

/**
 * A non-negative amount on input, as a string of digits (never a JSON number, which a parser may
 * already have rounded): up to 14 whole digits and `scale` decimals.
 */
export const DecimalInput = (scale: number, description: string) =>
  Chars(21, {
    pattern: `^[0-9]{1,14}(\\.[0-9]{1,${scale}})?$`,
    error: `must be a decimal string such as "12.5" (digits, at most ${scale} decimals)`,
    description,
  })
