// A real HTTP receiver on loopback for webhook tests: records every request as it arrives and
// answers what `respond` says (200 by default, after `delayMs`).

export type Received = { at: number; headers: Record<string, string>; body: string; event: any }
export type Reply = { status?: number; headers?: Record<string, string>; delayMs?: number }

export function startReceiver(respond: (req: Received, index: number) => Reply = () => ({})) {
  const received: Received[] = []
  let inFlight = 0
  let maxInFlight = 0
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 60,
    async fetch(request) {
      const body = await request.text()
      let event: any = null
      try {
        event = JSON.parse(body)
      } catch {}
      const headers: Record<string, string> = {}
      request.headers.forEach((value, name) => {
        headers[name] = value
      })
      const entry = { at: Date.now(), headers, body, event }
      received.push(entry)
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      const reply = respond(entry, received.length - 1)
      if (reply.delayMs) await Bun.sleep(reply.delayMs)
      inFlight--
      return new Response('ok', { status: reply.status ?? 200, headers: reply.headers })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port,
    received,
    maxInFlight: () => maxInFlight,
    ofType: (type: string) => received.filter((r) => r.event?.event_type === type),
    stop: () => server.stop(true),
  }
}
