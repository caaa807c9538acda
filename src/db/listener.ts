import pg from 'pg'
import { logger } from '../shared/logger'

type Channel = {
  onMessage: (payload: string) => void
  /** Called with false when the connection is lost (messages may be missed) and true once listening again. */
  onListening?: (listening: boolean) => void
}

/**
 * The process's one LISTEN connection, shared by every channel (key revocation, resolver cache,
 * …). It reconnects after a loss; while it is down, each channel is told so that a cache that
 * relies on its messages can stop trusting itself.
 */
class Listener {
  #channels = new Map<string, Channel>()
  #client: pg.Client | null = null
  #url = ''
  #stopped = true
  #retry: ReturnType<typeof setTimeout> | undefined

  /** Registers a channel; when the connection is already up, listens on it at once. */
  async on(channel: string, handler: Channel) {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`bad channel name ${channel}`)
    this.#channels.set(channel, handler)
    if (this.#client && !this.#stopped) await this.#client.query(`LISTEN ${channel}`).catch(() => {})
  }

  start(url: string) {
    this.#url = url
    this.#stopped = false
    void this.#connect()
  }

  async stop() {
    this.#stopped = true
    clearTimeout(this.#retry)
    this.#tell(false)
    await this.#client?.end().catch(() => {})
    this.#client = null
  }

  #tell(listening: boolean) {
    for (const channel of this.#channels.values()) channel.onListening?.(listening)
  }

  async #connect() {
    if (this.#stopped) return
    const client = new pg.Client({ connectionString: this.#url })
    this.#client = client
    const lost = () => {
      this.#tell(false)
      if (!this.#stopped) this.#retry = setTimeout(() => void this.#connect(), 1000)
    }
    client.on('error', (err) => logger.warn({ err }, 'notification listener connection error'))
    client.on('end', lost)
    client.on('notification', (msg) => {
      const channel = this.#channels.get(msg.channel)
      if (channel && msg.payload !== undefined) channel.onMessage(msg.payload)
    })
    try {
      await client.connect()
      for (const name of this.#channels.keys()) await client.query(`LISTEN ${name}`)
      this.#tell(true)
    } catch (err) {
      if (!this.#stopped) logger.warn({ err }, 'notification listener could not connect; retrying in 1 s')
      client.removeListener('end', lost)
      await client.end().catch(() => {})
      lost()
    }
  }
}

export const listener = new Listener()
