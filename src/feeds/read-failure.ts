import { InputLimitError } from './adapters/input'

/** Why a feed could not be read, in words an operator can act on. */
export function readFailure(err: unknown): string {
  if (err instanceof InputLimitError) return err.message
  const e = err as NodeJS.ErrnoException
  if (e?.code === 'Z_BUF_ERROR' || /unexpected end of file/i.test(e?.message ?? ''))
    return 'the file ends early: a truncated gzip stream (unexpected end of file); rows before the break were imported'
  if (e?.code === 'Z_DATA_ERROR')
    return `the file is not valid gzip (${e.message}); rows before the break were imported`
  if (e?.code === 'ENOENT') return 'the file cannot be read: it does not exist (any longer)'
  if (e?.code === 'EACCES') return 'the file cannot be read: permission denied'
  if (e?.code === 'EISDIR') return 'the path is a folder; this format reads a single file'
  return `the file cannot be read: ${e?.message ?? String(err)}`
}

/** A rejected row's text as jsonb can hold it: NUL and lone surrogates become U+FFFD. */
export const storable = (text: string) => text.replaceAll('\0', '\uFFFD').toWellFormed()
