import { describe, expect, test } from 'bun:test'
import { createProduct } from '../../../src/catalog/products'
import { transaction } from '../../../src/db/tx'
import { createRetailer } from '../../../src/retailers/retailers'
import { parseId } from '../../../src/shared/ids'
import { createOrganization, sql, unique, uniqueGtin } from '../../support/fixtures'

// Services take an executor and leave the transaction to their caller, so several compose in one.
describe('services compose in one transaction', () => {
  const subjects = `select id from products where gtin = any($1) union select id from retailers where name = $2`
  const state = async (gtins: string[], retailer: string) => ({
    products: (await sql('select id from products where gtin = any($1)', [gtins.map((g) => `0${g}`)])).length,
    retailers: (await sql('select id from retailers where name = $1', [retailer])).length,
    events: (
      await sql(`select id from events where subject_id in (${subjects})`, [gtins.map((g) => `0${g}`), retailer])
    ).length,
    // an emit's dispatch job has its first dispatched event's id
    dispatched: (
      await sql(
        `select e.id from events e join pgboss.job j on j.id = e.id and j.name = 'events.dispatch'
         where e.subject_id in (${subjects})`,
        [gtins.map((g) => `0${g}`), retailer],
      )
    ).length,
  })

  test('two products and a retailer, rolled back: nothing of them is left, no event', async () => {
    const org = await createOrganization()
    const orgId = parseId(org.id)!
    const gtins = [uniqueGtin(), uniqueGtin()]
    const retailer = unique('Composed Retailer')
    const failed = await transaction(async (tx) => {
      await createProduct(tx, orgId, { gtin: gtins[0]!, product_name: 'First' })
      await createProduct(tx, orgId, { gtin: gtins[1]!, product_name: 'Second' })
      await createRetailer(tx, orgId, { name: retailer }, false)
      const inside = await tx.execute(
        `select count(*)::int n from products where gtin in ('0${gtins[0]}', '0${gtins[1]}')`,
      )
      expect(inside.rows[0]).toEqual({ n: 2 }) // written, in this transaction
      throw new Error('abandon the whole import')
    }).catch((err: Error) => err.message)
    expect(failed).toBe('abandon the whole import')
    expect(await state(gtins, retailer)).toEqual({ products: 0, retailers: 0, events: 0, dispatched: 0 })
  })

  // a product's event is dispatched (the resolver's subscriber takes it by job); the retailer's goes
  // only to the webhook fan-out, which ran in the transaction itself: no dispatch job for it
  test("the same, committed: all three with one event each, the products' dispatched", async () => {
    const org = await createOrganization()
    const orgId = parseId(org.id)!
    const gtins = [uniqueGtin(), uniqueGtin()]
    const retailer = unique('Composed Retailer')
    await transaction(async (tx) => {
      await createProduct(tx, orgId, { gtin: gtins[0]!, product_name: 'First' })
      await createProduct(tx, orgId, { gtin: gtins[1]!, product_name: 'Second' })
      await createRetailer(tx, orgId, { name: retailer }, false)
    })
    expect(await state(gtins, retailer)).toEqual({ products: 2, retailers: 1, events: 3, dispatched: 2 })
  })
})
