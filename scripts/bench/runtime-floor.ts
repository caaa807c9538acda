// The runtime's floor for a scan: Bun alone, answering every /01/… path with a constant 307 that
// carries the headers a scan's answer carries, with no application, database or heap of ours.
// scripts/bench/resolve.ts measures it after the service, on the same CPU and with the same wrk
// script: what it cannot reach, the service cannot either, and a run in one of the machine's slow
// spells shows there as well. Run as a process of its own: PORT, then it prints "ready".
const HEADERS = {
  location: 'https://brand.example/products/04006381333931?utm_source=pack',
  link: '<http://127.0.0.1/01/04006381333931?linkType=linkset>; rel="linkset"; type="application/linkset+json"',
  vary: 'Accept',
  'cache-control': 'no-cache',
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'Link, Location, ETag',
  'x-request-id': '00000000-0000-4000-8000-000000000000',
}
const answer = () => new Response(null, { status: 307, headers: HEADERS })
Bun.serve({
  port: Number(process.env.PORT),
  hostname: '127.0.0.1',
  routes: { '/01/*': answer },
  fetch: () => new Response(null, { status: 404 }),
})
console.log('ready')
