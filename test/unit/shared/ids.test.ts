import { describe, expect, test } from 'bun:test'
import { createTranslator } from 'short-uuid'
import { parseId, SHORTUUID_ALPHABET, toShortId } from '../../../src/shared/ids'

describe('shortuuid ids (Python shortuuid 1.x alphabet)', () => {
  const vectors: [string, string][] = [
    ['00000000-0000-0000-0000-000000000000', '2222222222222222222222'],
    ['6ca4f0f8-2508-4bac-b8f1-5d1e3da2247a', 'MLpZDiEXM4VsUryR9oE8uc'],
    ['ffffffff-ffff-ffff-ffff-ffffffffffff', 'oZEq7ovRbLq6UnGMPwc8B5'],
  ]
  test.each(vectors)('%s <-> %s', (uuid, short) => {
    expect(toShortId(uuid)).toBe(short)
    expect(parseId(short)).toBe(uuid)
    expect(parseId(uuid)).toBe(uuid)
    expect(parseId(uuid.toUpperCase())).toBe(uuid)
  })

  test('the fast encoder agrees with short-uuid on random UUIDs, and round-trips', () => {
    const reference = createTranslator(SHORTUUID_ALPHABET)
    for (let i = 0; i < 2000; i++) {
      const uuid = crypto.randomUUID()
      expect(toShortId(uuid)).toBe(reference.fromUUID(uuid))
      expect(parseId(toShortId(uuid))).toBe(uuid)
    }
  })

  test('the fast encoder agrees with short-uuid on 100,000 random 128-bit values (time-ordered ids too)', () => {
    const reference = createTranslator(SHORTUUID_ALPHABET)
    const hex = (bytes: Uint8Array) => [...bytes].map((x) => x.toString(16).padStart(2, '0')).join('')
    const mismatched: string[] = []
    for (let i = 0; i < 100_000; i++) {
      // any 128 bits, not only version-4 UUIDs: every word's full range, the top bit included
      const h = i % 2 ? hex(crypto.getRandomValues(new Uint8Array(16))) : Bun.randomUUIDv7().replaceAll('-', '')
      const uuid = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
      if (toShortId(uuid) !== reference.fromUUID(uuid)) mismatched.push(uuid)
    }
    expect(mismatched).toEqual([])
  })

  test('the encoder refuses what is not a UUID', () => {
    expect(() => toShortId('6ca4f0f8-2508-4bac-b8f1-5d1e3da2247')).toThrow('not a UUID')
    expect(() => toShortId('6ca4f0f8-2508-4bac-b8f1-5d1e3da2247g')).toThrow('not a UUID')
  })

  test('every id is 22 characters of the alphabet', () => {
    for (let i = 0; i < 200; i++) {
      expect(toShortId(crypto.randomUUID())).toMatch(
        /^[23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz]{22}$/,
      )
    }
  })

  test.each([
    ['too short', 'MLpZDiEXM4VsUryR9oE8u'],
    ['too long', 'MLpZDiEXM4VsUryR9oE8ucc'],
    ['outside the alphabet (0, 1, I, O, l)', 'MLpZDiEXM4VsUryR9oE8u0'],
    ['over 128 bits', 'zzzzzzzzzzzzzzzzzzzzzz'],
    ['bad UUID', '6ca4f0f8-2508-4bac-b8f1-5d1e3da2247'],
    ['empty', ''],
  ])('rejects %s', (_, id) => {
    expect(parseId(id)).toBeNull()
  })
})
