import { t } from 'elysia'
import { Chars } from '../shared/schema-types'

/**
 * RFC 3339 with a time zone and a four-digit year: Elysia's `date-time` format alone also takes a
 * bare date, and years PostgreSQL cannot store. Whether the day exists is checked in recalls.ts.
 */
const RFC3339 =
  '^[1-9][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$'

const EXAMPLE = {
  reason: 'Undeclared peanuts found in lot L2405; do not eat, return for a full refund.',
  recalled_at: '2026-05-04T09:30:00Z',
  url: 'https://acme.example/recalls/2026-05-oat-bar',
}

/** The recall in effect on a product, as the product resource shows it. */
export const Recall = t.Union(
  [
    t.Object(
      {
        reason: Chars(1000, { minLength: 1 }),
        recalled_at: t.String({ format: 'date-time' }),
        url: t.Union([t.String({ maxLength: 2048 }), t.Null()], {
          description: "the recall notice; null: the service's own notice page, /products/recall/{gtin}",
        }),
      },
      { examples: [EXAMPLE] },
    ),
    t.Null(),
  ],
  { description: 'the recall in effect, or null (POST and DELETE …/recall/)' },
)

export const RecallBody = t.Object(
  {
    reason: Chars(1000, {
      minLength: 1,
      pattern: '\\S',
      error: 'must be 1 to 1000 characters, not only spaces',
      description: 'why the product is recalled, as shoppers should read it',
    }),
    recalled_at: t.Optional(
      t.String({
        format: 'date-time',
        pattern: RFC3339,
        error: 'must be an RFC 3339 date-time with a time zone (2026-05-04T09:30:00Z), not in the future',
        description: 'when the recall was issued; default now; not in the future',
      }),
    ),
    url: t.Optional(
      t.Union([Chars(2048, { minLength: 1 }), t.Null()], {
        error: 'must be an absolute http(s) URL of at most 2048 characters, or null',
        description:
          'the recall notice (absolute http(s) URL); omitted or null: the service serves its own notice page at /products/recall/{gtin}',
      }),
    ),
  },
  { additionalProperties: false, examples: [EXAMPLE] },
)
export type RecallBody = typeof RecallBody.static
