// The synthetic catalog of the search benchmark: products, brands and retailers with realistic
// names, generated in SQL from word lists with a fixed hash (the same catalog on every run).
import type pg from 'pg'

const BRAND_PARTS = [
  ['Nor', 'Val', 'Bel', 'Casa', 'Green', 'Sun', 'Gold', 'Alpen', 'Terra', 'Nova', 'Blue', 'Wild', 'Happy', 'Royal'],
  ['dell', 'ria', 'mont', 'field', 'valley', 'farm', 'berg', 'ona', 'lux', 'dale', 'wood', 'crest', 'ville', 'ara'],
  ['', '', '', ' Foods', ' Kitchen', ' & Co', ' Organics', ' Brothers', ' Dairy', ' Bakery'],
]
const ADJECTIVES = [
  'Dark',
  'Milk',
  'White',
  'Organic',
  'Classic',
  'Crunchy',
  'Smooth',
  'Spicy',
  'Sweet',
  'Salted',
  'Roasted',
  'Light',
  'Extra',
  'Fresh',
  'Wholegrain',
  'Creamy',
  'Zesty',
  'Smoked',
  'Honey',
  'Vanilla',
  'Lemon',
  'Mint',
]
const NOUNS = [
  'Chocolate',
  'Cookies',
  'Crackers',
  'Yogurt',
  'Granola',
  'Muesli',
  'Tea',
  'Coffee',
  'Juice',
  'Soda',
  'Pasta',
  'Sauce',
  'Soup',
  'Chips',
  'Bread',
  'Cereal',
  'Butter',
  'Cheese',
  'Ham',
  'Salami',
  'Olive Oil',
  'Peanut Butter',
  'Jam',
  'Honey',
  'Noodles',
  'Rice',
  'Beans',
  'Tuna',
  'Salmon',
  'Water',
  'Lemonade',
  'Ice Cream',
  'Biscuits',
  'Wafers',
  'Pretzels',
  'Popcorn',
  'Hummus',
  'Pesto',
  'Ketchup',
  'Mustard',
]
const FLAVOURS = [
  'with Hazelnuts',
  'with Almonds',
  'Strawberry',
  'Raspberry',
  'Peach',
  'Mango',
  'Caramel',
  'Cinnamon',
  'Green Tea',
  'Sea Salt',
  'Tomato Basil',
  'Garlic',
  'Paprika',
  'Blueberry',
  'Coconut',
  'Orange',
  '',
  '',
  '',
]
const SIZES = ['100 g', '200 g', '250 g', '330 ml', '500 ml', '1 l', '400 g', '1 kg', '6 x 25 cl']
const INGREDIENTS = [
  'sugar, cocoa butter, whole milk powder, hazelnuts',
  'wheat flour, sugar, palm oil, salt, raising agent',
  'water, sugar, citric acid, natural flavouring',
  'pork, salt, dextrose, E250',
  'durum wheat semolina, water',
  'tomatoes, olive oil, basil, garlic, salt',
  'oats, honey, almonds, sunflower oil',
  'milk, cream, sugar, vanilla, egg yolk',
  'peanuts, salt',
  'rice, water, rapeseed oil, soy sauce (soybeans, wheat)',
]
const RETAILER_PARTS = [
  ['Fresh', 'Corner', 'City', 'Green', 'Family', 'Super', 'Daily', 'Market', 'Village', 'Euro'],
  ['Mart', 'Market', 'Grocer', 'Foods', 'Store', 'Basket', 'Pantry', 'Shop', 'Deli', 'Halle'],
]

/** A deterministic non-negative int4 hash of row `i` (bigint arithmetic: no overflow at millions of rows). */
const hash = (i: string, k: number, s: number) => `(hashint8(${i}::int8 * ${k} + ${s}) & 2147483647)`
const lit = (values: string[]) => `array[${values.map((v) => `'${v.replaceAll("'", "''")}'`).join(',')}]`
/** A deterministic pick from `list` for row `i` and salt `s`. */
const pick = (list: string[], s: number, i = 'i') => `(${lit(list)})[1 + ${hash(i, 7919, s)} % ${list.length}]`

/** One of several SQL expressions (arrays: indexing a 2-D array gives an element, not a row). */
const choice = (expressions: string[], s: number) =>
  `case ${hash('i', 7919, s)} % ${expressions.length} ${expressions.map((e, k) => `when ${k} then ${e}`).join(' ')} end`

export async function seedCatalog(
  client: pg.PoolClient,
  counts: { products: number; brands: number; retailers: number },
  organizationId: string,
  progress: (line: string) => void,
  /** builds every search document (the service's `search reindex`) */
  buildDocuments: () => Promise<void>,
) {
  await client.query(`set maintenance_work_mem = '512MB'`)
  await client.query(`insert into brands (name)
    select distinct on (lower(n)) n from (
      select ${pick(BRAND_PARTS[0]!, 1)} || ${pick(BRAND_PARTS[1]!, 2)} || ${pick(BRAND_PARTS[2]!, 3)}
        || case when i > 2000 then ' ' || (i % 997)::text else '' end as n
      from generate_series(1, ${counts.brands * 2}) i) x limit ${counts.brands}`)
  progress(`brands: ${counts.brands}`)
  await client.query(
    `insert into retailers (organization_id, name, is_canonical, is_online, is_physical, website)
    select $1, ${pick(RETAILER_PARTS[0]!, 4)} || ' ' || ${pick(RETAILER_PARTS[1]!, 5)} || ' ' || i, true, i % 2 = 0, i % 3 > 0,
      'https://shop' || i || '.example'
    from generate_series(1, ${counts.retailers}) i`,
    [organizationId],
  )
  progress(`retailers: ${counts.retailers}`)
  // products: indexes dropped for the load and built once after it
  const indexes = await client.query<{ indexdef: string; indexname: string }>(
    `select indexname, indexdef from pg_indexes where tablename = 'products' and indexname like 'products_%_idx'`,
  )
  for (const i of indexes.rows) await client.query(`drop index ${i.indexname}`)
  await client.query(`create temporary table brand_ids as select row_number() over (order by id) n, id from brands`)
  // a GTIN-14 body of 13 digits and its GS1 check digit (odd positions weigh 3)
  await client.query(`create function pg_temp.with_check(body text) returns text language sql immutable as $$
    select body || ((10 - (
      (substr(body,1,1)::int + substr(body,3,1)::int + substr(body,5,1)::int + substr(body,7,1)::int
       + substr(body,9,1)::int + substr(body,11,1)::int + substr(body,13,1)::int) * 3
      + substr(body,2,1)::int + substr(body,4,1)::int + substr(body,6,1)::int + substr(body,8,1)::int
      + substr(body,10,1)::int + substr(body,12,1)::int) % 10) % 10)::text $$`)
  const chunk = 100_000
  for (let start = 0; start < counts.products; start += chunk) {
    const end = Math.min(counts.products, start + chunk)
    await client.query(`insert into products (gtin, product_name, brand_id, description, ingredients_text,
        contains_allergens, certifications, substances, net_content)
      select pg_temp.with_check('0' || (400000000000 + i)::text),
        ${pick(ADJECTIVES, 6)} || ' ' || ${pick(NOUNS, 7)} || ' ' || ${pick(FLAVOURS, 8)},
        b.id,
        'A ' || lower(${pick(ADJECTIVES, 9)}) || ' ' || lower(${pick(NOUNS, 10)}) || ' made the traditional way.',
        ${pick(INGREDIENTS, 11)},
        ${choice(["array['milk','nuts']", "array['gluten']", 'array[]::text[]', "array['peanuts']", "array['milk','eggs']", "array['gluten','soybeans']"], 12)},
        ${choice(["array['organic']", 'array[]::text[]', "array['organic','usda-organic']", "array['vegan']", 'array[]::text[]'], 13)},
        case when ${hash('i', 41, 14)} % 10 = 0 then '[{"slug":"e250","span":"E250","confidence":0.95}]'::jsonb
             when ${hash('i', 41, 14)} % 10 = 1 then '[{"slug":"e250","span":"nitrit","confidence":0.6}]'::jsonb
             else '[]'::jsonb end,
        ${pick(SIZES, 15)}
      from generate_series(${start + 1}, ${end}) i
      join brand_ids b on b.n = 1 + ${hash('i', 53, 16)} % ${counts.brands}`)
    progress(`products: ${end.toLocaleString('en')} / ${counts.products.toLocaleString('en')}`)
  }
  for (const i of indexes.rows) {
    await client.query(i.indexdef)
    progress(`index ${i.indexname}`)
  }
  // the search documents as the service builds them, their indexes too dropped for the load
  const documentIndexes = await client.query<{ indexdef: string; indexname: string }>(
    `select indexname, indexdef from pg_indexes
    where tablename in ('search_products', 'search_brands', 'search_retailers') and indexname like '%\\_idx'`,
  )
  for (const i of documentIndexes.rows) await client.query(`drop index ${i.indexname}`)
  const t0 = performance.now()
  await buildDocuments()
  progress(`search documents built in ${((performance.now() - t0) / 1000).toFixed(0)} s`)
  for (const i of documentIndexes.rows) {
    await client.query(i.indexdef)
    progress(`index ${i.indexname}`)
  }
  // vacuum too: a bulk load leaves the visibility map unset (autovacuum would set it later), and the
  // title-order walk is an index-only scan only where it is set
  for (const table of ['products', 'brands', 'retailers', 'search_products', 'search_brands', 'search_retailers'])
    await client.query(`vacuum (analyze) ${table}`)
}
