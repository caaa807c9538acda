import { afterAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from '../support/process'
import { baseUrl } from '../support/server'

// Every host but the service is blocked: Chromium sends whatever is not loopback to this proxy,
// which records the host and refuses. The page must render with nothing recorded.
// Chromium's own services (sign-in, component updates, clock) are not the page's and are left out.
const BROWSER_SERVICES =
  /^(CONNECT |\w+ http:\/\/)(accounts\.google\.com|update\.googleapis\.com|clients\d\.google\.com)[:/]/
const attempted: string[] = []
const proxy: Server = createServer((socket) => {
  socket.once('data', (d) => {
    const line = d.toString('latin1').split('\r\n')[0] ?? ''
    if (!BROWSER_SERVICES.test(line)) attempted.push(line)
    socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n')
  })
  socket.on('error', () => {})
})
await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done))
const proxyPort = (proxy.address() as { port: number }).port
afterAll(() => {
  proxy.close()
  rmSync(profile, { recursive: true, force: true })
})

const browser = ['chromium', 'chromium-browser'].find((b) => Bun.which(b))
const artifacts = join(ROOT, '.test-data', 'artifacts')
const profile = mkdtempSync(join(tmpdir(), 'gtin-chromium-'))

// Asynchronous: the server under test runs in this same process and must keep answering.
async function chromium(args: string[]) {
  if (!browser) throw new Error('chromium is not installed: apt-get install chromium (npm test installs it as root)')
  const proc = Bun.spawn(
    [
      browser,
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-extensions',
      '--disable-default-apps',
      '--no-default-browser-check',
      '--no-pings',
      '--metrics-recording-only',
      '--disable-client-side-phishing-detection',
      '--disable-features=NetworkTimeServiceQuerying,OptimizationHints,Translate,MediaRouter,AutofillServerCommunication,SignInProfileCreation,AccountConsistency',
      `--proxy-server=http://127.0.0.1:${proxyPort}`,
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
      `--user-data-dir=${profile}`,
      '--virtual-time-budget=15000',
      ...args,
    ],
    { stdout: 'pipe', stderr: 'ignore', timeout: 60_000 },
  )
  const out = await new Response(proc.stdout).text()
  await proc.exited
  return out
}

describe('/docs, rendered in headless Chromium with every other host blocked', () => {
  test('shows the whole operation list', async () => {
    mkdirSync(artifacts, { recursive: true })
    const dom = await chromium(['--dump-dom', `${baseUrl}/docs`])
    // Swagger UI renders one .opblock per operation, with its path and summary
    const operations = dom.match(/class="opblock opblock-/g) ?? []
    expect(operations.length).toBeGreaterThanOrEqual(26)
    for (const summary of ['Create a product (spec #11)', 'Generate a 1D barcode (spec #8)', 'Start a batch export'])
      expect(dom).toContain(summary)
    expect(dom).toContain('/products/api/v1/products/{gtin}/claim')
    expect(attempted).toEqual([])
  }, 90_000)

  test('a screenshot of the operation list is written to .test-data/artifacts/docs.png', async () => {
    const file = join(artifacts, 'docs.png')
    await chromium(['--window-size=1280,2400', `--screenshot=${file}`, `${baseUrl}/docs`])
    expect(statSync(file).size).toBeGreaterThan(50_000) // a blank page is a few KB
    expect(attempted).toEqual([])
  }, 90_000)
})
