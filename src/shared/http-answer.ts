/**
 * Reads an HTTP/1.1 answer to a POST as its bytes arrive (http-post.ts): its status and
 * Retry-After, and where it ends, so the connection can carry the next POST. The body is skipped,
 * never kept. Answers are framed by Content-Length, by chunked transfer coding, or by the end of the
 * connection; the head is bounded, and so is the body skipped (a longer one ends the connection,
 * its status still counts).
 */
export const MAX_HEAD_BYTES = 16 * 1024
export const MAX_SKIPPED_BODY_BYTES = 64 * 1024

export type Answer = {
  status: number
  /** the Retry-After header as sent, when there is one */
  retryAfter: string | null
  /** the connection may carry another request (the answer ended where its framing says) */
  reusable: boolean
}

/** An answer that is not HTTP/1.x, or a head longer than the bound (fetch's own name for both). */
export class MalformedAnswer extends Error {
  readonly code = 'Malformed_HTTP_Response'
}

const CRLF_CRLF = Buffer.from('\r\n\r\n')
const CRLF = Buffer.from('\r\n')

type Framing =
  | { kind: 'length'; left: number }
  | { kind: 'chunked'; state: 'size' | 'data' | 'data-end' | 'trailer'; left: number }
  | { kind: 'close' }

export class AnswerReader {
  private buffered: Buffer | null = null
  private head: Omit<Answer, 'reusable'> | null = null
  private framing: Framing | null = null
  private keepAlive = true
  private skipped = 0

  /**
   * Takes the next bytes: the answer once it has ended (or once its body is past the bound, not
   * reusable), else null. Throws MalformedAnswer.
   */
  feed(bytes: Buffer): Answer | null {
    let data = this.buffered ? Buffer.concat([this.buffered, bytes]) : bytes
    this.buffered = null
    while (!this.framing) {
      const end = data.indexOf(CRLF_CRLF)
      if (end < 0) {
        if (data.length > MAX_HEAD_BYTES) throw new MalformedAnswer('the head of the answer is too long')
        this.buffered = data
        return null
      }
      if (end > MAX_HEAD_BYTES) throw new MalformedAnswer('the head of the answer is too long')
      const interim = this.readHead(data.toString('latin1', 0, end))
      data = data.subarray(end + 4)
      if (interim) continue
      if (this.framing === null) return this.done(true)
    }
    return this.skip(data)
  }

  /** The connection ended: the answer, when it was framed by that end (else null: cut short). */
  ended(): Answer | null {
    return this.framing?.kind === 'close' ? this.done(false) : null
  }

  /** Reads a head; true for an interim (1xx) answer, whose final answer follows. */
  private readHead(text: string): boolean {
    const lines = text.split('\r\n')
    const statusLine = /^HTTP\/1\.([01]) (\d{3})(?: .*)?$/.exec(lines[0] ?? '')
    if (!statusLine) throw new MalformedAnswer('the answer is not HTTP/1.x')
    const status = Number(statusLine[2])
    if (status >= 100 && status < 200) return true
    this.keepAlive = statusLine[1] === '1'
    let length: number | null = null
    let chunked = false
    let retryAfter: string | null = null
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!
      const colon = line.indexOf(':')
      if (colon <= 0) throw new MalformedAnswer('a header of the answer has no name')
      const name = line.slice(0, colon).trim().toLowerCase()
      const value = line.slice(colon + 1).trim()
      if (name === 'content-length') {
        if (!/^\d+$/.test(value) || (length !== null && length !== Number(value)))
          throw new MalformedAnswer('the answer has an invalid Content-Length')
        length = Number(value)
      } else if (name === 'transfer-encoding') chunked = /(?:^|,)\s*chunked\s*$/i.test(value)
      else if (name === 'connection') {
        if (/(?:^|,)\s*close\s*(?:,|$)/i.test(value)) this.keepAlive = false
        else if (/(?:^|,)\s*keep-alive\s*(?:,|$)/i.test(value)) this.keepAlive = true
      } else if (name === 'retry-after') retryAfter = value
    }
    this.head = { status, retryAfter }
    // no body: 204 and 304 (RFC 9112 6.3)
    if (status === 204 || status === 304) this.framing = null
    else if (chunked) this.framing = { kind: 'chunked', state: 'size', left: 0 }
    else if (length !== null) this.framing = length === 0 ? null : { kind: 'length', left: length }
    else this.framing = { kind: 'close' }
    if (this.framing?.kind === 'length' && this.framing.left > MAX_SKIPPED_BODY_BYTES) {
      this.framing = { kind: 'close' }
      this.skipped = Number.POSITIVE_INFINITY
    }
    return false
  }

  private done(reusable: boolean): Answer {
    const head = this.head!
    return { status: head.status, retryAfter: head.retryAfter, reusable: reusable && this.keepAlive }
  }

  /** Skips body bytes as the framing says: the answer once it has ended. */
  private skip(data: Buffer): Answer | null {
    const framing = this.framing!
    if (this.skipped > MAX_SKIPPED_BODY_BYTES) return this.done(false)
    if (framing.kind === 'close') {
      this.skipped += data.length
      return this.skipped > MAX_SKIPPED_BODY_BYTES ? this.done(false) : null
    }
    if (framing.kind === 'length') {
      // bytes past its Content-Length: the status counts, the connection is not trusted again
      if (data.length > framing.left) return this.done(false)
      framing.left -= data.length
      return framing.left === 0 ? this.done(true) : null
    }
    let at = 0
    while (at < data.length) {
      if (framing.state === 'data') {
        const take = Math.min(framing.left, data.length - at)
        at += take
        framing.left -= take
        this.skipped += take
        if (this.skipped > MAX_SKIPPED_BODY_BYTES) return this.done(false)
        if (framing.left === 0) framing.state = 'data-end'
        continue
      }
      const end = data.indexOf(CRLF, at)
      if (end < 0) {
        if (data.length - at > 1024) throw new MalformedAnswer('a chunk line of the answer is too long')
        this.buffered = data.subarray(at)
        return null
      }
      const line = data.toString('latin1', at, end)
      at = end + 2
      if (framing.state === 'data-end') {
        if (line !== '') throw new MalformedAnswer('a chunk of the answer is longer than its size')
        framing.state = 'size'
      } else if (framing.state === 'size') {
        const size = /^([0-9a-fA-F]{1,8})\s*(?:;.*)?$/.exec(line)
        if (!size) throw new MalformedAnswer('a chunk size of the answer is invalid')
        framing.left = Number.parseInt(size[1]!, 16)
        framing.state = framing.left === 0 ? 'trailer' : 'data'
      } else if (line === '') {
        // the empty line after the trailer: the answer ends here
        return this.done(at === data.length)
      }
    }
    return null
  }
}
