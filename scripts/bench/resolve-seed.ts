// The resolver benches' data (scripts/bench/resolve.ts, resolve-ab.ts): an organization with
// `products` products of 100 brands and five rules a product, and the scan paths wrk cycles through.
import { sql } from 'drizzle-orm'
import { createOrganization } from '../../src/accounts/organizations'
import type { Db } from '../../src/db/client'
import { gs1CheckDigit } from '../../src/shared/gs1'
import { parseId } from '../../src/shared/ids'

export const RULES_PER_PRODUCT = 5

/** Seeds the data; returns the organization's API key and the paths (plain, queried, lot, serial, link type). */
export async function seedResolverBench(db: Db, products: number) {
  const { organization, api_key } = await createOrganization(db, {
    name: 'Resolver bench',
    owner_email: 'r@example.test',
  })
  const orgId = parseId(organization.id)!

  const gtins = Array.from({ length: products }, (_, i) => {
    const body = `0${401_234_500_000 + i}`
    return `${body}${gs1CheckDigit(body)}`
  })
  await db.execute(sql`insert into brands (name, organization_id)
    select 'Bench brand ' || n, ${orgId}::uuid from generate_series(0, 99) n`)
  await db.execute(sql`insert into products (gtin, product_name, owner_id, brand_id, data_source)
    select g, 'Bench product ' || i, ${orgId}::uuid,
           (select id from brands where name = 'Bench brand ' || (i % 100) and organization_id = ${orgId}::uuid),
           'claimed'
    from unnest(${sql.raw(`array[${gtins.map((g) => `'${g}'`).join(',')}]`)}::text[]) with ordinality as t(g, i)`)
  // five rules a product, the conditions of real campaigns: a weekday-hours default, a weekend
  // default in some states, a product page, a lot recall and one serialised item
  await db.execute(sql`insert into resolution_rules
      (organization_id, scope_type, scope_id, product_id, order_index, days_of_week, time_of_day_start,
       time_of_day_end, timezone, link_type, location_countries, location_regions, custom_url)
    select ${orgId}::uuid, r.scope_type, coalesce(r.scope_value, p.id::text), p.id, r.order_index, r.days::smallint[],
           r.t0, r.t1, 'America/Los_Angeles', r.link_type, r.countries::text[], r.regions::text[],
           'https://brand.example/' || p.gtin || '/' || r.slug
    from products p
    cross join (values
      ('PRODUCT', null, 0, '{6,7}', null, null, 'gs1:defaultLink', '{US}', '{US-CA,US-NV}', 'weekend'),
      ('PRODUCT', null, 1, '{}', '08:00', '20:00', 'gs1:defaultLink', '{}', '{}', 'day'),
      ('PRODUCT', null, 2, '{}', null, null, 'gs1:pip', '{}', '{}', 'pip'),
      ('BATCH', 'L1', 0, '{}', null, null, 'gs1:defaultLink', '{}', '{}', 'recall'),
      ('SERIAL', 'S1', 0, '{}', null, null, 'gs1:defaultLink', '{}', '{}', 'serial')
    ) as r(scope_type, scope_value, order_index, days, t0, t1, link_type, countries, regions, slug)
    where p.owner_id = ${orgId}::uuid`)
  await db.execute(sql`insert into resolution_rules (organization_id, scope_type, scope_id, order_index, custom_url)
    values (${orgId}::uuid, 'ORGANIZATION', ${orgId}::text, 9, 'https://brand.example/')`)
  // the fresh rows vacuumed and analysed now, so that autovacuum does not do it during a measurement
  // (PostgreSQL shares its CPU with the load generator)
  await db.execute(sql`vacuum analyze brands, products, resolution_rules`)

  const paths = gtins.flatMap((g, i) => {
    const list = [`/01/${g}`, `/01/${g}?utm_source=pack`]
    if (i % 4 === 0) list.push(`/01/${g}/10/L1`, `/01/${g}/10/L1/21/S1`, `/01/${g}?linkType=gs1:pip`)
    return list
  })
  return { key: api_key.key, paths }
}
