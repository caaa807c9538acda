import { randomUUID } from 'node:crypto'
import { mkdir, open, readdir, rm, stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { Kind, TypeRegistry } from '@sinclair/typebox'
import { t } from 'elysia'
import { config } from '../config'
import { AppError } from '../shared/errors'
import { rateLimitHeaders } from './rate-limit'

/** The byte limit of the uploads that have no setting of their own (performance imports, barcode CSVs). */
export const UPLOAD_LIMIT = 20 * 1024 * 1024
/** The largest body any upload route takes (Bun's own body cap must be above it). */
export const largestUpload = () => Math.max(config.FEED_UPLOAD_MAX_MB * 1024 * 1024, UPLOAD_LIMIT)
/** How long a client may pause while sending a body (408 after). */
export const BODY_IDLE_MS = 10_000
/** Uploads one organization may be sending to this process at once. */
const PER_ORGANIZATION = 2
/** Seconds a refused upload is told to wait (an upload in progress usually ends within them). */
const RETRY_SECONDS = 10
/** The start of an upload, kept in memory to tell its format and check its header. */
const HEAD_BYTES = 64 * 1024
/** Rows of an upload stored in PostgreSQL (api and worker processes share nothing else). */
export const PART_BYTES = 1024 * 1024

/**
 * A request body that nothing has read: the edge hands uploads to their route as this, and the
 * route streams the bytes itself with its own limit. Neither the framework's parsers nor its
 * validators ever walk an upload (a 19 MiB Uint8Array walked key by key froze the process).
 */
export class UploadBody {
  constructor(
    readonly request: Request,
    /** the media type, lower-case, without parameters */
    readonly contentType: string,
  ) {}
}

TypeRegistry.Set('UploadBody', (_schema, value) => value instanceof UploadBody)

/** A route's upload body: a file sent as one of `mediaTypes`, read by the route itself. */
export const Upload = (mediaTypes: string[], description: string) =>
  t.Unsafe<UploadBody>({ [Kind]: 'UploadBody', type: 'string', description, 'x-media-types': mediaTypes })

const mib = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`
const tooLarge = (limit: number, name: string) =>
  new AppError('payload_too_large', `the upload exceeds ${mib(limit)} (${name})`)

let receiving = 0
const receivingBy = new Map<string, number>()

/**
 * Holds one of the process's upload slots for `organizationId` while `work` runs: at most
 * UPLOAD_CONCURRENCY uploads at once (503 past it) and two of one organization (429), so one tenant
 * cannot take every slot, temporary disk space or connection for itself. Every route that reads an
 * upload body (feeds, performance imports, barcode CSVs) reads it inside a slot.
 */
export async function inSlot<T>(organizationId: string, work: () => Promise<T>): Promise<T> {
  const mine = receivingBy.get(organizationId) ?? 0
  if (mine >= PER_ORGANIZATION)
    throw new AppError(
      'rate_limited',
      `your organization is already sending ${PER_ORGANIZATION} uploads; send the next when one has finished`,
      undefined,
      {
        'retry-after': String(RETRY_SECONDS),
        ...rateLimitHeaders({ limit: PER_ORGANIZATION, remaining: 0, resetSeconds: RETRY_SECONDS }),
      },
    )
  if (receiving >= config.UPLOAD_CONCURRENCY)
    throw new AppError(
      'service_unavailable',
      'the service is receiving as many uploads as it takes at once',
      undefined,
      { 'retry-after': String(RETRY_SECONDS) },
    )
  receiving++
  receivingBy.set(organizationId, mine + 1)
  try {
    return await work()
  } finally {
    receiving--
    const left = (receivingBy.get(organizationId) ?? 1) - 1
    if (left) receivingBy.set(organizationId, left)
    else receivingBy.delete(organizationId)
  }
}

/** How a request body may arrive: the errors it gets past its size, its total time or a pause. */
export type BodyBounds = {
  limit: number
  tooLarge: () => AppError
  /** the whole body must have arrived within this */
  timeoutMs: number
  /** and no pause between chunks may be longer than this */
  idleMs: number
  late: () => AppError
  stalled: () => AppError
}

/**
 * A request body's chunks as they arrive, within `bounds` (413 past the limit, 408 when late or
 * stalled); the rest of the body is cancelled when reading stops early. JSON bodies and uploads
 * both read through here.
 */
export async function* requestChunks(request: Request, bounds: BodyBounds): AsyncGenerator<Uint8Array> {
  const reader = request.body?.getReader()
  if (!reader) return
  const deadline = Date.now() + bounds.timeoutMs
  let size = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  let finished = false
  try {
    for (;;) {
      const wait = Math.min(bounds.idleMs, deadline - Date.now())
      const timeout = new Promise<'timeout'>((done) => {
        timer = setTimeout(() => done('timeout'), Math.max(0, wait))
      })
      const next = await Promise.race([reader.read(), timeout])
      clearTimeout(timer)
      if (next === 'timeout') throw Date.now() >= deadline ? bounds.late() : bounds.stalled()
      if (next.done) break
      size += next.value.byteLength
      if (size > bounds.limit) throw bounds.tooLarge()
      yield next.value
    }
    finished = true
  } finally {
    clearTimeout(timer)
    if (!finished) void reader.cancel().catch(() => {})
  }
}

/**
 * An upload's chunks as they arrive: 413 past `limit` bytes (at once when Content-Length says
 * so), 408 when the client pauses for BODY_IDLE_MS or has not finished by UPLOAD_TIMEOUT_SECONDS.
 */
export async function* bodyChunks(body: UploadBody, limit: number, limitName: string): AsyncGenerator<Uint8Array> {
  const declared = body.request.headers.get('content-length')
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit, limitName)
  yield* requestChunks(body.request, {
    limit,
    tooLarge: () => tooLarge(limit, limitName),
    timeoutMs: config.UPLOAD_TIMEOUT_SECONDS * 1000,
    idleMs: BODY_IDLE_MS,
    late: () =>
      new AppError(
        'request_timeout',
        `the upload did not arrive within ${config.UPLOAD_TIMEOUT_SECONDS} s (UPLOAD_TIMEOUT_SECONDS)`,
      ),
    stalled: () => new AppError('request_timeout', `the upload stalled: nothing arrived for ${BODY_IDLE_MS / 1000} s`),
  })
}

/** An upload received into a temporary file: its path, size and first bytes. */
export type ReceivedUpload = { path: string; size: number; head: Buffer; contentType: string }

/** Where uploads wait while they arrive, and feed uploads while their run reads them. */
export const uploadDir = () => resolve(join(config.DATA_DIR, 'uploads'))

/**
 * Removes what a killed process left in the upload folder: uploads that cannot still be arriving
 * (older than twice UPLOAD_TIMEOUT_SECONDS) and read copies of feed uploads older than a day (a
 * run reads its copy within minutes). Other processes sharing DATA_DIR keep their files.
 */
export async function sweepUploads(now = Date.now()) {
  const entries = await readdir(uploadDir(), { withFileTypes: true }).catch(() => [])
  for (const entry of entries) {
    if (!entry.isFile()) continue
    const path = join(uploadDir(), entry.name)
    const age = now - (await stat(path).catch(() => ({ mtimeMs: now }))).mtimeMs
    const limit = entry.name.endsWith('.upload') ? 2 * config.UPLOAD_TIMEOUT_SECONDS * 1000 : 24 * 3600 * 1000
    if (age > limit) await rm(path, { force: true })
  }
}

/**
 * Streams an upload to a temporary file under DATA_DIR/uploads (never into memory), hands it to
 * `use` (which stores it: the file is removed when `use` ends, whatever happens), and holds an
 * upload slot meanwhile. Nothing is stored when the body breaks a limit. `checkHead` sees the
 * first HEAD_BYTES (or the whole body, if shorter) as soon as they are in: when it throws, the
 * rest of the body is not read.
 */
export async function withUpload<T>(
  body: UploadBody,
  opts: { organizationId: string; limit: number; limitName: string; checkHead?: (head: Buffer) => void },
  use: (upload: ReceivedUpload) => Promise<T>,
): Promise<T> {
  return inSlot(opts.organizationId, async () => {
    await mkdir(uploadDir(), { recursive: true })
    const path = join(uploadDir(), `${randomUUID()}.upload`)
    const file = await open(path, 'wx', 0o600)
    try {
      const head: Buffer[] = []
      let size = 0
      let checked = !opts.checkHead
      try {
        for await (const chunk of bodyChunks(body, opts.limit, opts.limitName)) {
          if (size < HEAD_BYTES) head.push(Buffer.from(chunk.subarray(0, HEAD_BYTES - size)))
          size += chunk.byteLength
          if (!checked && size >= HEAD_BYTES) {
            checked = true
            opts.checkHead!(Buffer.concat(head))
          }
          await file.write(chunk)
        }
      } finally {
        await file.close()
      }
      if (!checked && size > 0) opts.checkHead!(Buffer.concat(head))
      return await use({ path, size, head: Buffer.concat(head), contentType: body.contentType })
    } finally {
      await rm(path, { force: true })
    }
  })
}

/** A received upload's bytes in parts of PART_BYTES, read one at a time. */
export async function* fileParts(path: string): AsyncGenerator<Buffer> {
  const file = await open(path, 'r')
  try {
    for (;;) {
      const part = Buffer.allocUnsafe(PART_BYTES)
      const { bytesRead } = await file.read(part, 0, PART_BYTES, null)
      if (bytesRead === 0) return
      yield bytesRead === PART_BYTES ? part : part.subarray(0, bytesRead)
    }
  } finally {
    await file.close()
  }
}
