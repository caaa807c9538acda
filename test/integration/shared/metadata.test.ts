import { describe, expect, test } from 'bun:test'
import { createKey, createOrganization, expectProblem, RETAILERS } from '../../support/fixtures'
import { get, patch, post } from '../../support/server'

// The 50-key limit applies to the metadata after a write is merged, not to the write itself.
const keys = (from: number, n: number, value = 'v') =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${from + i}`, value]))

describe('metadata limits after the merge', () => {
  test('on 40 keys, deleting 30 and adding 30 in one write is valid (40 remain)', async () => {
    const org = await createOrganization()
    const created = await post(RETAILERS, { name: 'Meta', metadata: keys(0, 40) }, org.key)
    expect(Object.keys(created.json.metadata)).toHaveLength(40)
    const res = await patch(
      `${RETAILERS}/${created.json.id}`,
      { metadata: { ...keys(0, 30, ''), ...keys(100, 30) } },
      org.key,
    )
    expect(res.status).toBe(200)
    expect(Object.keys(res.json.metadata).sort()).toEqual(Object.keys({ ...keys(30, 10), ...keys(100, 30) }).sort())
  })

  test('a write whose result passes 50 keys is 422 and changes nothing', async () => {
    const org = await createOrganization()
    const created = await post(RETAILERS, { name: 'Meta', metadata: keys(0, 45) }, org.key)
    const res = await patch(`${RETAILERS}/${created.json.id}`, { metadata: keys(100, 6) }, org.key)
    expectProblem(res, 422, 'validation_error')
    expect(res.json.errors).toEqual([{ field: 'metadata', message: 'would have 51 keys after this write; at most 50' }])
    expect(Object.keys((await get(`${RETAILERS}/${created.json.id}`, org.key)).json.metadata)).toHaveLength(45)
    expectProblem(await post(RETAILERS, { name: 'Meta', metadata: keys(0, 51) }, org.key), 422, 'validation_error')
  })
})

describe('messages that say what is wrong', () => {
  test('a non-string metadata value, a null name, and the role a key needs', async () => {
    const org = await createOrganization()
    const number = await post(RETAILERS, { name: 'Meta', metadata: { a: 5 } }, org.key)
    expectProblem(number, 422, 'validation_error')
    expect(number.json.errors).toEqual([
      { field: 'metadata.a', message: 'must be a string of at most 500 characters; got number' },
    ])
    const nullName = await post(RETAILERS, { name: null }, org.key)
    expect(nullName.json.errors).toEqual([
      { field: 'name', message: 'must be a string of between 1 and 255 characters; got null' },
    ])
    const readonly = await post(RETAILERS, { name: 'Meta' }, await createKey(org, 'readonly'))
    expectProblem(readonly, 403, 'forbidden')
    expect(readonly.json.detail).toBe('this action needs an editor key; this key is readonly')
  })
})
