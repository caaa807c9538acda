// A render thread: renders symbols for the pool (render-pool.ts), off the thread that serves HTTP.
import { AppError } from '../shared/errors'
import { renderBarcode } from './barcodes'
import type { SymbolSettings } from './schemas'

declare const self: Worker

export type RenderRequest = { id: number; input: string; settings: SymbolSettings }
export type RenderReply =
  | { id: number; ok: true; bytes: Uint8Array | string; contentType: string; fileName: string }
  | { id: number; ok: false; code: AppError['code']; message: string; errors?: AppError['errors'] }

self.onmessage = async (event: MessageEvent<RenderRequest>) => {
  const { id, input, settings } = event.data
  let reply: RenderReply
  try {
    reply = { id, ok: true, ...(await renderBarcode(input, settings)) }
  } catch (err) {
    reply =
      err instanceof AppError
        ? { id, ok: false, code: err.code, message: err.message, errors: err.errors }
        : { id, ok: false, code: 'internal_error', message: 'the symbol could not be rendered' }
  }
  self.postMessage(reply)
}
