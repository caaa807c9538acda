import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MalformedAnswer } from '../../../src/shared/http-answer'
import { httpPost, IDLE_MS, idleConnections, type PostTarget } from '../../../src/shared/http-post'
import { postPinned, TargetRefused } from '../../../src/shared/outbound'
import { eventually } from '../../support/eventually'

// The delivery client (src/shared/http-post.ts) against real receivers on loopback: Bun's, Node's,
// raw sockets that misbehave, and TLS with a certificate made for the test.

const JSON_HEADERS = { 'content-type': 'application/json', 'x-service-event-id': 'evt_1' }

const plain = (port: number, path = '/hook'): PostTarget => ({
  address: '127.0.0.1',
  port,
  tls: false,
  hostname: '127.0.0.1',
  host: `127.0.0.1:${port}`,
  path,
})

/** fetch's error for the same POST, as the sender would log it. */
const fetchError = (port: number) =>
  fetch(`http://127.0.0.1:${port}/hook`, { method: 'POST', body: '{}', headers: JSON_HEADERS }).then(
    () => 'answered',
    (err: Error) => err.message,
  )
const postError = (target: PostTarget, timeoutMs = 2000) =>
  httpPost(target, '{}', JSON_HEADERS, timeoutMs).then(
    () => 'answered',
    (err: Error) => err,
  )

/** A raw TCP receiver: `onData` gets each connection's bytes; connections and their closes counted. */
function rawReceiver(onData: (socket: Bun.Socket<{ id: number }>, text: string, requests: number) => void) {
  const counts = { connections: 0, closed: 0, requests: 0, bytes: '' }
  const server = Bun.listen<{ id: number }>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        socket.data = { id: ++counts.connections }
      },
      data(socket, data) {
        const text = data.toString()
        counts.bytes += text
        if (text.startsWith('POST ')) counts.requests++
        onData(socket, text, counts.requests)
      },
      close() {
        counts.closed++
      },
    },
  })
  return { port: server.port as number, counts, stop: () => server.stop(true) }
}

/** A Node receiver; connections counted. */
async function nodeReceiver(handler: http.RequestListener) {
  const server = http.createServer(handler)
  const counts = { connections: 0, closed: 0 }
  server.on('connection', (socket) => {
    counts.connections++
    socket.on('close', () => counts.closed++)
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const { port } = server.address() as AddressInfo
  return {
    port,
    counts,
    server,
    stop: () => {
      server.closeAllConnections()
      server.close()
    },
  }
}

describe('the delivery client', () => {
  test('a Bun receiver: body, Host, path and headers as sent; one connection for POSTs one after another', async () => {
    const seen: { body: string; host: string | null; url: string; type: string | null; port: number }[] = []
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(request, srv) {
        seen.push({
          body: await request.text(),
          host: request.headers.get('host'),
          url: request.url,
          type: request.headers.get('x-service-event-id'),
          port: srv.requestIP(request)!.port,
        })
        return new Response('thanks', { status: 202 })
      },
    })
    try {
      const target = { ...plain(server.port as number, '/hooks/in?k=1'), host: `hooks.test:${server.port}` }
      const body = JSON.stringify({ text: 'ünïcödé '.repeat(100) })
      for (let i = 0; i < 3; i++)
        expect(await httpPost(target, body, JSON_HEADERS, 2000)).toMatchObject({ status: 202 })
      expect(seen.map((s) => s.body)).toEqual([body, body, body])
      expect(seen[0]).toMatchObject({ host: `hooks.test:${server.port}`, type: 'evt_1' })
      expect(new URL(seen[0]!.url).pathname + new URL(seen[0]!.url).search).toBe('/hooks/in?k=1')
      expect(new Set(seen.map((s) => s.port)).size).toBe(1)
    } finally {
      server.stop(true)
    }
  })

  test("Node's receiver: a chunked 503 with Retry-After, three POSTs on one connection", async () => {
    const receiver = await nodeReceiver((req, res) => {
      req.resume()
      req.on('end', () => {
        res.writeHead(503, { 'retry-after': '120' })
        res.write('busy, ')
        res.end('come back later')
      })
    })
    try {
      for (let i = 0; i < 3; i++)
        expect(await httpPost(plain(receiver.port), '{}', JSON_HEADERS, 2000)).toEqual({
          status: 503,
          retryAfter: '120',
          reusable: true,
        })
      expect(receiver.counts.connections).toBe(1)
    } finally {
      receiver.stop()
    }
  })

  test('an answer with an over-long body: its status counts, its connection is not kept', async () => {
    const long = 'x'.repeat(100 * 1024)
    const receiver = await nodeReceiver((req, res) => {
      req.resume()
      req.on('end', () => res.end(long))
    })
    try {
      expect(await httpPost(plain(receiver.port), '{}', JSON_HEADERS, 2000)).toMatchObject({
        status: 200,
        reusable: false,
      })
      expect(idleConnections(receiver.port)).toBe(0)
      expect(await httpPost(plain(receiver.port), '{}', JSON_HEADERS, 2000)).toMatchObject({ status: 200 })
      expect(receiver.counts.connections).toBe(2)
    } finally {
      receiver.stop()
    }
  })

  test('a receiver closing idle connections: the closed one is dropped, the next POST opens another', async () => {
    const receiver = await nodeReceiver((req, res) => {
      req.resume()
      req.on('end', () => res.end('ok'))
    })
    receiver.server.keepAliveTimeout = 100
    try {
      expect((await httpPost(plain(receiver.port), '{}', JSON_HEADERS, 2000)).status).toBe(200)
      expect(idleConnections(receiver.port)).toBe(1)
      await eventually(() => receiver.counts.closed === 1, 3000, 'the receiver to close the idle connection')
      await eventually(() => idleConnections(receiver.port) === 0, 3000, 'the client to drop it')
      expect((await httpPost(plain(receiver.port), '{}', JSON_HEADERS, 2000)).status).toBe(200)
      expect(receiver.counts.connections).toBe(2)
    } finally {
      receiver.stop()
    }
  })

  test(`idle connections are closed after ${IDLE_MS} ms`, async () => {
    const receiver = await nodeReceiver((req, res) => {
      req.resume()
      req.on('end', () => res.end('ok'))
    })
    receiver.server.keepAliveTimeout = 60_000
    try {
      await Promise.all([1, 2].map(() => httpPost(plain(receiver.port), '{}', JSON_HEADERS, 2000)))
      expect(receiver.counts.connections).toBe(2)
      await Bun.sleep(IDLE_MS - 1000)
      expect(receiver.counts.closed).toBe(0)
      await eventually(() => receiver.counts.closed === 2, IDLE_MS, 'the sweep')
    } finally {
      receiver.stop()
    }
  }, 15_000)

  test('a kept connection the receiver drops mid-POST: the POST fails as with fetch, and is not sent again', async () => {
    const receiver = rawReceiver((socket, _text, requests) => {
      if (requests === 1) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok')
      else socket.terminate()
    })
    try {
      expect((await httpPost(plain(receiver.port), '{}', JSON_HEADERS, 2000)).status).toBe(200)
      const failed = await postError(plain(receiver.port))
      expect(failed).toBeInstanceOf(TypeError)
      expect((failed as Error).message).toBe(await fetchError(receiver.port))
      expect(receiver.counts.connections).toBeGreaterThanOrEqual(2) // fetch's own POST
      expect(receiver.counts.requests).toBe(3) // ours twice, fetch's once: nothing sent again
    } finally {
      receiver.stop()
    }
  })

  test("refused and reset connections fail with fetch's own messages", async () => {
    const closing = rawReceiver((socket) => socket.end())
    const free = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    const refusedPort = free.port as number
    free.stop(true)
    try {
      const refused = (await postError(plain(refusedPort))) as Error & { code: string }
      expect(refused.message).toBe(await fetchError(refusedPort))
      expect(refused.code).toBe('ECONNREFUSED')
      const reset = (await postError(plain(closing.port))) as Error & { code: string }
      expect(reset.message).toBe(await fetchError(closing.port))
      expect(reset.code).toBe('ECONNRESET')
    } finally {
      closing.stop()
    }
  })

  test('a receiver that never answers: TimeoutError, its connection closed', async () => {
    const receiver = rawReceiver(() => {})
    try {
      const started = performance.now()
      const failed = (await postError(plain(receiver.port), 300)) as Error
      expect(failed.name).toBe('TimeoutError')
      expect(performance.now() - started).toBeLessThan(1500)
      expect(idleConnections(receiver.port)).toBe(0)
      await eventually(() => receiver.counts.closed === 1, 1000, 'the connection to close')
    } finally {
      receiver.stop()
    }
  })

  test('an endless head: refused as malformed (fetch names it so too), the connection closed', async () => {
    const receiver = rawReceiver((socket) => {
      socket.write(`HTTP/1.1 200 OK\r\n${'x-filler: abcdefgh\r\n'.repeat(2000)}`)
    })
    try {
      const failed = (await postError(plain(receiver.port))) as MalformedAnswer
      expect(failed).toBeInstanceOf(MalformedAnswer)
      expect(failed.code).toBe('Malformed_HTTP_Response')
      await eventually(() => receiver.counts.closed === 1, 1000, 'the connection to close')
    } finally {
      receiver.stop()
    }
  })

  test('a header with a line break is refused as fetch refuses it, and nothing is sent', async () => {
    const receiver = rawReceiver(() => {})
    try {
      const failed = await httpPost(plain(receiver.port), '{}', { 'x-a': 'b\r\nx-injected: 1' }, 1000).catch((e) => e)
      expect(failed).toBeInstanceOf(TypeError)
      expect((failed as Error).message).toBe("Header 'x-a' has invalid value")
      await Bun.sleep(100)
      expect(receiver.counts.connections).toBe(0)
    } finally {
      receiver.stop()
    }
  })

  test('the checks of outbound.ts before any connection: a loopback target refused outside development', async () => {
    const receiver = rawReceiver(() => {})
    try {
      const url = `http://127.0.0.1:${receiver.port}/hook`
      const failed = await postPinned(url, '{}', JSON_HEADERS, { development: false }, 1000).catch((e) => e)
      expect(failed).toBeInstanceOf(TargetRefused)
      const named = `http://localhost:${receiver.port}/hook`
      expect(await postPinned(named, '{}', JSON_HEADERS, { development: false }, 1000).catch((e) => e)).toBeInstanceOf(
        TargetRefused,
      )
      await Bun.sleep(100)
      expect(receiver.counts.connections).toBe(0)
    } finally {
      receiver.stop()
    }
  })

  test('a name is resolved, pinned and sent as the Host', async () => {
    const receiver = rawReceiver((socket) => socket.write('HTTP/1.1 204 No Content\r\n\r\n'))
    try {
      const url = `http://localhost:${receiver.port}/hook?a=b`
      expect(await postPinned(url, '{}', JSON_HEADERS, { development: true }, 2000)).toMatchObject({ status: 204 })
      expect(receiver.counts.bytes).toStartWith(`POST /hook?a=b HTTP/1.1\r\nhost: localhost:${receiver.port}\r\n`)
    } finally {
      receiver.stop()
    }
  })
})

describe('the delivery client over TLS', () => {
  let dir = ''
  let cert = ''
  let key = ''
  beforeAll(() => {
    // a certificate for hooks.test and 127.0.0.1, made for this run
    dir = mkdtempSync(join(tmpdir(), 'hooks-tls-'))
    const made = Bun.spawnSync([
      'openssl',
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=hooks.test',
      '-addext',
      'subjectAltName=DNS:hooks.test,IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ])
    if (made.exitCode !== 0) throw new Error(`openssl: ${made.stderr.toString()}`)
    cert = readFileSync(join(dir, 'cert.pem'), 'utf8')
    key = readFileSync(join(dir, 'key.pem'), 'utf8')
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  const tlsReceiver = () => {
    const bodies: string[] = []
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      tls: { cert, key },
      async fetch(request) {
        bodies.push(`${request.headers.get('host')} ${await request.text()}`)
        return new Response(null, { status: 204 })
      },
    })
    return { server, bodies }
  }
  const secure = (port: number, hostname: string, ca?: string): PostTarget => ({
    address: '127.0.0.1',
    port,
    tls: true,
    hostname,
    host: hostname,
    path: '/hook',
    ca,
  })

  test('accepted for the certificate’s name, once it is trusted', async () => {
    const { server, bodies } = tlsReceiver()
    const port = server.port as number
    try {
      expect(await httpPost(secure(port, 'hooks.test', cert), '{"a":1}', JSON_HEADERS, 2000)).toMatchObject({
        status: 204,
      })
      expect(bodies).toEqual(['hooks.test {"a":1}'])
    } finally {
      server.stop(true)
    }
  })

  test('refused for another name, and untrusted: nothing sent', async () => {
    const { server, bodies } = tlsReceiver()
    const port = server.port as number
    try {
      const otherName = (await postError(secure(port, 'other.test', cert))) as Error & { code: string }
      expect(otherName.code).toBe('ERR_TLS_CERT_ALTNAME_INVALID')
      const untrusted = (await postError(secure(port, 'hooks.test'))) as Error & { code: string }
      expect(untrusted).toBeInstanceOf(TypeError)
      expect(untrusted.code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY/)
      expect(bodies).toEqual([])
    } finally {
      server.stop(true)
    }
  })
})
