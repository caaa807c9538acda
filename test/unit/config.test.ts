import { describe, expect, test } from 'bun:test'
import { loadConfig } from '../../src/config'

describe('configuration from the environment', () => {
  test('numbers are numbers; defaults apply; a bad value is refused by name', () => {
    const c = loadConfig({ DB_POOL_SIZE: '20', SEARCH_ANONYMOUS_PER_MINUTE: '120', PORT: '8080' })
    expect(c.DB_POOL_SIZE).toBe(20)
    expect(c.SEARCH_ANONYMOUS_PER_MINUTE).toBe(120)
    expect(c.PORT).toBe(8080)
    expect(loadConfig({}).SEARCH_ANONYMOUS_PER_MINUTE).toBe(60)
    expect(() => loadConfig({ DB_POOL_SIZE: 'abc' })).toThrow(/DB_POOL_SIZE/)
    expect(() => loadConfig({ SEARCH_ANONYMOUS_PER_MINUTE: '0' })).toThrow(/SEARCH_ANONYMOUS_PER_MINUTE/)
  })
})
