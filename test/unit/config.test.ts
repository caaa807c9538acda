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

  test('extra embedded PostgreSQL settings are name=value pairs, anything else is refused by name', () => {
    const settings = 'shared_preload_libraries=pg_stat_statements work_mem=64MB'
    expect(loadConfig({ EMBEDDED_POSTGRES_SETTINGS: settings }).EMBEDDED_POSTGRES_SETTINGS).toBe(settings)
    expect(loadConfig({}).EMBEDDED_POSTGRES_SETTINGS).toBe('')
    expect(() => loadConfig({ EMBEDDED_POSTGRES_SETTINGS: 'fsync off' })).toThrow(/EMBEDDED_POSTGRES_SETTINGS/)
    expect(() => loadConfig({ EMBEDDED_POSTGRES_SETTINGS: 'a=1; drop' })).toThrow(/EMBEDDED_POSTGRES_SETTINGS/)
  })
})
