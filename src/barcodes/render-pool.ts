import { availableParallelism } from 'node:os'
import { AppError } from '../shared/errors'
import type { RenderedBarcode } from './barcodes'
import type { RenderReply, RenderRequest } from './render-worker'
import type { SymbolSettings } from './schemas'

/** Requests waiting for a render thread, at most; past it the caller gets 503 and Retry-After. */
const MAX_QUEUED = 512

type Pending = { resolve: (r: RenderedBarcode) => void; reject: (e: unknown) => void }

/**
 * Symbols are rendered on worker threads, so that a large raster never holds the thread that
 * answers HTTP (and health probes). One thread per core but one (at least one), each taking one
 * job at a time from a shared queue.
 */
class RenderPool {
  #threads: { worker: Worker; busy: boolean }[] = []
  #queue: { message: Omit<RenderRequest, 'id'>; pending: Pending }[] = []
  #pending = new Map<number, Pending & { thread: number }>()
  #next = 1

  #start() {
    const size = Math.max(1, availableParallelism() - 1)
    for (let i = 0; i < size; i++) {
      const worker = new Worker(new URL('./render-worker.ts', import.meta.url).href)
      ;(worker as unknown as { unref: () => void }).unref()
      worker.onmessage = (event: MessageEvent<RenderReply>) => this.#settle(i, event.data)
      this.#threads.push({ worker, busy: false })
    }
  }

  render(input: string, settings: SymbolSettings): Promise<RenderedBarcode> {
    if (this.#threads.length === 0) this.#start()
    if (this.#queue.length >= MAX_QUEUED)
      return Promise.reject(
        new AppError('service_unavailable', 'the barcode renderer is busy; retry shortly', undefined, {
          'retry-after': '1',
        }),
      )
    return new Promise((resolve, reject) => {
      this.#queue.push({ message: { input, settings }, pending: { resolve, reject } })
      this.#pump()
    })
  }

  #pump() {
    for (const [i, thread] of this.#threads.entries()) {
      if (thread.busy) continue
      const job = this.#queue.shift()
      if (!job) return
      const id = this.#next++
      thread.busy = true
      this.#pending.set(id, { ...job.pending, thread: i })
      thread.worker.postMessage({ id, ...job.message } satisfies RenderRequest)
    }
  }

  #settle(thread: number, reply: RenderReply) {
    const pending = this.#pending.get(reply.id)
    this.#pending.delete(reply.id)
    this.#threads[thread]!.busy = false
    if (pending) {
      if (reply.ok) pending.resolve({ bytes: reply.bytes, contentType: reply.contentType, fileName: reply.fileName })
      else pending.reject(new AppError(reply.code, reply.message, reply.errors))
    }
    this.#pump()
  }
}

const pool = new RenderPool()

/** One symbol in the requested format, rendered on a render thread (contract §8). */
export const renderOffThread = (input: string, settings: SymbolSettings) => pool.render(input, settings)
