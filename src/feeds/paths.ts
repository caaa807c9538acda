import { open, realpath, stat } from 'node:fs/promises'
import { isAbsolute, join, relative, resolve, sep } from 'node:path'
import { config } from '../config'
import { invalidField } from '../shared/errors'
import type { FeedSource } from './adapters'

/** Where server-side feed files live; a run may only name a path inside it. */
export const feedDir = () => resolve(config.FEED_DIR ?? `${config.DATA_DIR}/feeds`)

/** Whether `path` is `base` or below it (both absolute and resolved). */
function isInside(base: string, path: string) {
  const rel = relative(base, path)
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel)
}

/** A regular file inside `base` (symlinks followed, and their target inside too) that this process can open. */
async function readableFile(base: string, path: string) {
  const real = await realpath(path).catch(() => null)
  if (!real || !isInside(base, real)) return null
  const info = await stat(real).catch(() => null)
  if (!info?.isFile()) return null
  const file = await open(real, 'r').catch(() => null)
  await file?.close()
  return file ? real : null
}

/**
 * A server path inside FEED_DIR (relative paths are taken from it): a readable file, or for the
 * USDA source the CSV download's folder. Anything else is one and the same 422, whatever the
 * cause (outside the folder, missing, unreadable, a folder, a symlink out of it): the answer
 * must not tell a caller which files exist on the server. A path that is outside by its text
 * alone is refused without asking the file system.
 */
export async function feedPath(path: string, source?: FeedSource, root = feedDir()): Promise<string> {
  const refused = () => invalidField('path', 'must name a readable feed file inside the feed folder (FEED_DIR)')
  const base = await realpath(root).catch(() => null)
  const full = base && resolve(base, path)
  if (!base || !full || !isInside(base, full)) throw refused()
  const file = await readableFile(base, full)
  if (file) return file
  const real = await realpath(full).catch(() => null)
  if (source === 'usda' && real && isInside(base, real) && (await stat(real).catch(() => null))?.isDirectory()) {
    // the USDA CSV download is a folder: the two files it is read from must be there
    const files = await Promise.all(['food.csv', 'branded_food.csv'].map((f) => readableFile(base, join(real, f))))
    if (files.every(Boolean)) return real
  }
  throw refused()
}
