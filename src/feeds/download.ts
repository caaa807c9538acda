import { mkdir, rm } from 'node:fs/promises'
import { dirname } from 'node:path'
import { config } from '../config'
import { fetchPinned, type TargetPolicy, TargetRefused, targetPolicy } from '../shared/outbound'

const MAX_REDIRECTS = 5

export class DownloadFailed extends Error {}

/**
 * Downloads a feed to `dest`, streaming it to disk. Every hop (redirects included, at most 5) is
 * checked as webhook targets are: https only and public addresses only outside development, and
 * the connection goes to the address that was checked. Bounded by FEED_DOWNLOAD_TIMEOUT_SECONDS and
 * FEED_DOWNLOAD_MAX_MB; a failed download leaves no file. Throws DownloadFailed with the reason.
 */
export async function downloadFeed(
  raw: string,
  dest: string,
  policy: TargetPolicy = targetPolicy(),
): Promise<{ bytes: number }> {
  const signal = AbortSignal.timeout(config.FEED_DOWNLOAD_TIMEOUT_SECONDS * 1000)
  const limit = config.FEED_DOWNLOAD_MAX_MB * 1024 * 1024
  let url = new URL(raw)
  let response: Response | null = null
  try {
    for (let hop = 0; ; hop++) {
      if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.development))
        throw new DownloadFailed(`${url.href}: only https:// feeds may be fetched (http:// only in development)`)
      if (url.username || url.password) throw new DownloadFailed(`${url.href}: must not carry a user name or password`)
      response = await fetchPinned(url, { signal, headers: { 'user-agent': 'gtin-catalog feed import' } }, policy)
      const location = response.headers.get('location')
      if (response.status < 300 || response.status > 399 || !location) break
      await response.body?.cancel().catch(() => {})
      if (hop === MAX_REDIRECTS) throw new DownloadFailed(`${raw}: more than ${MAX_REDIRECTS} redirects`)
      url = new URL(location, url)
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => {})
      throw new DownloadFailed(`${url.href} answered ${response.status}`)
    }
    const declared = Number(response.headers.get('content-length') ?? 0)
    if (declared > limit) throw new DownloadFailed(`${url.href} is ${declared} bytes, over FEED_DOWNLOAD_MAX_MB`)
    await mkdir(dirname(dest), { recursive: true })
    const file = Bun.file(dest).writer()
    const reader = response.body!.getReader()
    let bytes = 0
    try {
      for (let part = await reader.read(); !part.done; part = await reader.read()) {
        bytes += part.value.length
        if (bytes > limit)
          throw new DownloadFailed(`${url.href} is over FEED_DOWNLOAD_MAX_MB (${config.FEED_DOWNLOAD_MAX_MB} MB)`)
        file.write(part.value)
      }
    } finally {
      await reader.cancel().catch(() => {})
      await file.end()
    }
    return { bytes }
  } catch (err) {
    await rm(dest, { force: true })
    if (err instanceof DownloadFailed) throw err
    if (err instanceof TargetRefused) throw new DownloadFailed(`refused: ${err.message}`)
    const e = err as Error
    if (e?.name === 'TimeoutError')
      throw new DownloadFailed(`${url.href}: timed out after ${config.FEED_DOWNLOAD_TIMEOUT_SECONDS} s`)
    throw new DownloadFailed(`${url.href}: ${e?.message ?? String(err)}`)
  }
}
