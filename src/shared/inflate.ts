import { type Readable, Transform, type TransformCallback } from 'node:stream'
import { createGunzip, gunzipSync, constants as zlibConstants } from 'node:zlib'
import { InputLimitError } from './text-records'

const MiB = 1024 * 1024

/** How far a gzip file may expand: a decompression bomb fails its import instead of holding a worker. */
export type InflateLimits = {
  /** decompressed bytes at most (unset: no size limit) */
  maxBytes?: number
  /** the setting that gives maxBytes, named in the refusal */
  maxBytesName?: string
  /** decompressed:compressed ratio at most, checked once past `ratioAfter` decompressed bytes */
  maxRatio: number
  ratioAfter: number
}
export const DEFAULT_INFLATE_LIMITS: InflateLimits = { maxRatio: 100, ratioAfter: 4 * MiB }

export const isGzip = (bytes: Uint8Array) => bytes[0] === 0x1f && bytes[1] === 0x8b

/**
 * The decompressed start of a gzip file, to tell its format or read its header: the start of a
 * gzip stream decompresses on its own with a sync flush. Only the first `compressed` bytes are
 * read, so a bomb's head inflates to a few MiB at most (4 KiB of text is tens of KiB of rows).
 * Throws when the gzip header does not open.
 */
export const gunzipHead = (bytes: Uint8Array, compressed = 4096): Buffer =>
  gunzipSync(bytes.subarray(0, compressed), { finishFlush: zlibConstants.Z_SYNC_FLUSH })

/**
 * Counts what gunzip gives against what it was given and stops the stream past a limit. Real text
 * compresses 5-20:1; a 30 KB file that expands to 200,000 rows (or 1 KB to 1 GB of zeros) does not.
 */
class InflateGuard extends Transform {
  out = 0
  constructor(
    private readonly compressed: () => number,
    private readonly limits: InflateLimits,
  ) {
    super()
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
    this.out += chunk.length
    const { maxBytes, maxBytesName, maxRatio, ratioAfter } = this.limits
    if (maxBytes !== undefined && this.out > maxBytes)
      return done(
        new InputLimitError(
          `the file decompresses to more than ${Math.round(maxBytes / MiB)} MiB${maxBytesName ? ` (${maxBytesName})` : ''}: reading stopped there (rows read before were imported); split the file`,
        ),
      )
    const compressed = Math.max(1, this.compressed())
    if (this.out > ratioAfter && this.out > maxRatio * compressed)
      return done(
        new InputLimitError(
          `the file decompresses more than ${maxRatio}:1 (${Math.round(this.out / MiB)} MiB from ${Math.ceil(compressed / 1024)} KiB): refused as a decompression bomb (rows read before were imported)`,
        ),
      )
    done(null, chunk)
  }
}

/**
 * The decompressed bytes of a gzip stream within `limits` (a breach, or broken gzip, is an error of
 * the returned stream; either ends the reading of `raw`).
 */
export function gunzipBounded(raw: Readable, limits: InflateLimits = DEFAULT_INFLATE_LIMITS): Readable {
  let compressed = 0
  raw.on('data', (chunk: Buffer) => {
    compressed += chunk.length
  })
  const gunzip = createGunzip()
  const guard = new InflateGuard(() => compressed, limits)
  raw.on('error', (err) => gunzip.destroy(err))
  gunzip.on('error', (err) => guard.destroy(err))
  // a refused file is read no further
  guard.on('close', () => {
    gunzip.destroy()
    raw.destroy()
  })
  return raw.pipe(gunzip).pipe(guard)
}
