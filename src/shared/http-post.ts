import { checkServerIdentity } from 'node:tls'
import type { Socket } from 'bun'
import { type Answer, AnswerReader } from './http-answer'

/**
 * A keep-alive HTTP/1.1 client for one thing: POSTing a string body to an address outbound.ts has
 * already vetted (`postPinned` there), for webhook deliveries. Bun's fetch cost about three times
 * as much CPU a POST, most of it on its own HTTP client thread (docs/benchmarks.md, seventh and
 * eighth sessions); this runs on the JavaScript thread's event loop, on `Bun.connect`.
 *
 * - The connection goes to `address`; the URL's host goes in the Host header and, for HTTPS, in SNI
 *   and the certificate's check (the chain against the trusted roots, then the name), so no second
 *   lookup can move the POST elsewhere.
 * - Idle connections are kept per origin (up to MAX_IDLE_PER_ORIGIN) and closed after IDLE_MS by
 *   one sweep timer. A POST on a kept connection that the receiver closed meanwhile fails, as
 *   fetch's does, and is retried on the delivery's schedule, never sent again at once.
 * - `timeoutMs` covers the whole POST (connect, handshake, write, answer); a timed-out connection is
 *   closed before the timeout is reported.
 * - Failures carry fetch's own messages (TypeError with code ECONNREFUSED, ECONNRESET,
 *   Malformed_HTTP_Response; TimeoutError), so attempt logs and circuits read as they did.
 */
export type PostTarget = {
  /** the vetted address to connect to */
  address: string
  port: number
  tls: boolean
  /** the URL's host name: SNI and the certificate's check */
  hostname: string
  /** the URL's host (and port when not the default): the Host header */
  host: string
  /** the URL's path and query */
  path: string
  /** certificates trusted beside the system's roots (tests) */
  ca?: string
}

export const IDLE_MS = 4000
export const MAX_IDLE_PER_ORIGIN = 256

/** A failure named as fetch names it (`connection failed: ECONNRESET: …` in the attempt log). */
export class PostFailed extends TypeError {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

const refused = () =>
  new PostFailed('ECONNREFUSED', 'ECONNREFUSED: Unable to connect. Is the computer able to access the url?')
const closedEarly = () =>
  new PostFailed(
    'ECONNRESET',
    'ECONNRESET: The socket connection was closed unexpectedly. For more information, pass `verbose: true` in the second argument to fetch()',
  )
const timedOut = () => new DOMException('The operation timed out.', 'TimeoutError')

/** The POST a connection carries: its bytes, its answer's reader, its promise and its timeout. */
type Pending = {
  request: Buffer
  reader: AnswerReader
  resolve: (answer: Answer) => void
  reject: (err: unknown) => void
  timer: ReturnType<typeof setTimeout>
}

class Connection {
  socket: Socket<Connection> | null = null
  closed = false
  idleSince = 0
  pending: Pending | null = null
  /** the part of the request the socket has not taken yet */
  unsent: Buffer | null = null

  constructor(
    readonly origin: string,
    readonly target: PostTarget,
  ) {}

  send(request: Buffer) {
    const written = this.socket!.write(request)
    this.unsent = written < request.length ? request.subarray(Math.max(0, written)) : null
  }

  /** Ends the connection and the POST in progress with `err` (nothing when it is over already). */
  fail(err: unknown) {
    // taken before the close, whose handler may run inside it and would fail it as cut short
    const pending = this.pending
    this.pending = null
    this.close()
    if (!pending) return
    clearTimeout(pending.timer)
    pending.reject(err)
  }

  /** The POST's answer: the connection kept or closed as it says. */
  answered(answer: Answer) {
    const pending = this.pending!
    this.pending = null
    clearTimeout(pending.timer)
    if (answer.reusable) keep(this)
    else this.close()
    pending.resolve(answer)
  }

  close() {
    if (this.closed) return
    this.closed = true
    this.socket?.terminate()
    forget(this)
  }
}

const HANDLERS = {
  open(socket: Socket<Connection>) {
    const c = socket.data
    c.socket = socket
    // opened after its POST timed out: nothing to send, nothing to keep
    if (c.closed) return socket.terminate()
    if (!c.target.tls && c.pending) c.send(c.pending.request)
  },
  handshake(socket: Socket<Connection>, _success: boolean, authorizationError: Error | null) {
    const c = socket.data
    const code = (authorizationError as { code?: string } | null)?.code
    if (authorizationError)
      return c.fail(new PostFailed(code ?? 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', authorizationError.message))
    const mismatch = checkServerIdentity(c.target.hostname, socket.getPeerCertificate())
    if (mismatch)
      return c.fail(
        new PostFailed((mismatch as { code?: string }).code ?? 'ERR_TLS_CERT_ALTNAME_INVALID', mismatch.message),
      )
    if (c.pending) c.send(c.pending.request)
  },
  data(socket: Socket<Connection>, bytes: Buffer) {
    const c = socket.data
    const pending = c.pending
    // bytes with no POST waiting for them: nothing a receiver may send; the connection is not kept
    if (!pending) return c.close()
    let answer: Answer | null
    try {
      answer = pending.reader.feed(bytes)
    } catch (err) {
      return c.fail(err)
    }
    if (answer) c.answered(answer)
  },
  drain(socket: Socket<Connection>) {
    const c = socket.data
    if (c.unsent) c.send(c.unsent)
  },
  close(socket: Socket<Connection>) {
    const c = socket.data
    const answer = c.pending?.reader.ended() ?? null
    if (answer) return c.answered(answer)
    // an idle connection the receiver closed, or a POST cut short
    c.fail(closedEarly())
  },
  error(socket: Socket<Connection>, err: Error) {
    socket.data.fail(err)
  },
  connectError(socket: Socket<Connection>) {
    socket.data.fail(refused())
  },
}

/** Idle connections by origin, the most recently used last. */
const idle = new Map<string, Connection[]>()
let sweeper: ReturnType<typeof setInterval> | null = null

function keep(c: Connection) {
  const list = idle.get(c.origin) ?? []
  if (list.length === 0) idle.set(c.origin, list)
  if (list.length >= MAX_IDLE_PER_ORIGIN) return c.close()
  c.idleSince = performance.now()
  list.push(c)
  sweeper ??= setInterval(sweep, 1000)
  sweeper.unref?.()
}

function forget(c: Connection) {
  const list = idle.get(c.origin)
  const at = list?.indexOf(c) ?? -1
  if (at >= 0) list!.splice(at, 1)
  if (list?.length === 0) idle.delete(c.origin)
}

/** Closes the connections idle longer than IDLE_MS; stops when none is left. */
function sweep() {
  const before = performance.now() - IDLE_MS
  // oldest first: the list is in the order they went idle
  for (const list of [...idle.values()]) while (list.length && list[0]!.idleSince <= before) list[0]!.close()
  if (idle.size === 0 && sweeper) {
    clearInterval(sweeper)
    sweeper = null
  }
}

/** Connections kept idle now, to any port or to `port` (tests). */
export const idleConnections = (port?: number) =>
  [...idle.values()].flat().filter((c) => port === undefined || c.target.port === port).length

/** Connects; the POST is sent once the connection is open (for TLS, its certificate checked). */
function open(c: Connection) {
  const { target } = c
  const named = !/^[\d.]+$|:/.test(target.hostname)
  Bun.connect<Connection>({
    hostname: target.address,
    port: target.port,
    data: c,
    socket: HANDLERS,
    tls: target.tls
      ? { serverName: named ? target.hostname : undefined, rejectUnauthorized: false, ca: target.ca }
      : undefined,
  }).catch((err) => c.fail(err))
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const UNSAFE_VALUE = /[\r\n\0]/

/** The request's bytes; throws fetch's TypeError for a header it would refuse (nothing is sent). */
function request(target: PostTarget, body: string, headers: Record<string, string>): Buffer {
  let head = `POST ${target.path} HTTP/1.1\r\nhost: ${target.host}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`
  for (const name in headers) {
    const value = headers[name]!
    if (!TOKEN.test(name)) throw new TypeError(`Invalid header name: '${name}'`)
    if (UNSAFE_VALUE.test(value)) throw new TypeError(`Header '${name}' has invalid value`)
    const lower = name.toLowerCase()
    if (lower === 'host' || lower === 'content-length' || lower === 'connection' || lower === 'transfer-encoding')
      continue
    head += `${name}: ${value}\r\n`
  }
  return Buffer.from(`${head}\r\n${body}`)
}

/**
 * POSTs `body` to `target` and reads its answer (status and Retry-After; the body skipped).
 * Rejects with PostFailed (fetch's messages), MalformedAnswer or a TimeoutError.
 */
export async function httpPost(
  target: PostTarget,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<Answer> {
  const bytes = request(target, body, headers)
  const origin = `${target.tls ? 's' : ''} ${target.address} ${target.port} ${target.hostname} ${target.ca ? 'ca' : ''}`
  const list = idle.get(origin)
  const kept = list?.pop()
  if (list?.length === 0) idle.delete(origin)
  const c = kept ?? new Connection(origin, target)
  return new Promise<Answer>((resolve, reject) => {
    // the timeout closes the connection before it rejects: the slot it frees never sees it open
    const timer = setTimeout(() => c.fail(timedOut()), timeoutMs)
    c.pending = { request: bytes, reader: new AnswerReader(), resolve, reject, timer }
    if (kept) c.send(bytes)
    else open(c)
  })
}
