import { expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { signatureHeader } from '../../../src/webhooks/signature'
import { eventually } from '../../support/eventually'
import { freePort, ROOT, start } from '../../support/process'

// The receiver example of the README, run as written (its package import resolved by the
// package's own name), against signed, tampered and stale deliveries.
test('the README receiver accepts signed deliveries and refuses the rest', async () => {
  const readme = await Bun.file(join(ROOT, 'README.md')).text()
  const block = readme.match(/```ts\n(\s*import \{ verifyWebhookSignature \} from 'gtin-catalog'[\s\S]*?)```/)?.[1]
  expect(block).toBeDefined()
  const port = await freePort()
  const file = join(ROOT, `.receiver-${port}.ts`)
  writeFileSync(file, block!.replace('port: 8080', `port: ${port}`))
  const secret = 'whsec_readme-example-secret-0123456789abcdef'
  const receiver = start([process.execPath, file], { WEBHOOK_SECRET: secret })
  try {
    const url = `http://127.0.0.1:${port}/hook`
    // listening once it answers at all (an unsigned request is 400)
    await eventually(
      () =>
        fetch(url, { method: 'POST', body: '{}' }).then(
          (r) => r.status === 400,
          () => false,
        ),
      10_000,
      'the README receiver to start',
    ).catch((e: Error) => {
      throw new Error(`${e.message}: ${receiver.output()}`)
    })
    const body = JSON.stringify({ id: 'evt', event_type: 'webhook.test', data: {} })
    const send = (b: string, header: string) =>
      fetch(url, { method: 'POST', body: b, headers: { 'x-service-signature': header } }).then((r) => r.status)
    const now = new Date()
    expect(await send(body, signatureHeader({ secret }, body, now))).toBe(204)
    expect(await send(`${body} `, signatureHeader({ secret }, body, now))).toBe(400)
    expect(await send(body, signatureHeader({ secret: `${secret}x` }, body, now))).toBe(400)
    expect(await send(body, signatureHeader({ secret }, body, new Date(now.getTime() - 301_000)))).toBe(400)
  } finally {
    receiver.kill('SIGKILL')
    rmSync(file, { force: true })
  }
}, 30_000)
