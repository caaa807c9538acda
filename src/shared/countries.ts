import { Kind, TypeRegistry } from '@sinclair/typebox'
import { t } from 'elysia'
import countries from 'i18n-iso-countries'

/**
 * The officially assigned ISO 3166-1 alpha-2 codes (from i18n-iso-countries, which also lists the
 * user-assigned XK for Kosovo; that one is left out, as ISO has not assigned it).
 */
export const ASSIGNED_COUNTRIES: ReadonlySet<string> = new Set(
  Object.keys(countries.getAlpha2Codes()).filter((code) => code !== 'XK'),
)

TypeRegistry.Set(
  'CountryCode',
  (_schema, value) => typeof value === 'string' && (value === '' || ASSIGNED_COUNTRIES.has(value.toUpperCase())),
)

/** An assigned ISO 3166-1 alpha-2 code (any case, stored upper-case), or empty. */
export const CountryCode = (options: { description?: string } = {}) =>
  t.Unsafe<string>({
    [Kind]: 'CountryCode',
    type: 'string',
    maxLength: 2,
    pattern: '^([A-Za-z]{2})?$',
    error: 'must be an assigned ISO 3166-1 alpha-2 code (such as DE or US) or empty',
    ...options,
  })
