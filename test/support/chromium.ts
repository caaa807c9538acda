import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import puppeteer, { type Browser, type Page } from 'puppeteer-core'

/** Headless Chromium from the system's packages (npm test installs it as root when missing). */
export const CHROMIUM = ['chromium', 'chromium-browser'].map((b) => Bun.which(b)).find(Boolean) ?? null

// Chromium's own services (sign-in, component updates, clock) are not the page's and are left out.
const BROWSER_SERVICES =
  /^(CONNECT |\w+ http:\/\/)(accounts\.google\.com|update\.googleapis\.com|clients\d\.google\.com)[:/]/

const QUIET = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  // Debian's Chromium fetches field-trial configs and reports on its own: none of it is the page's
  '--disable-field-trial-config',
  '--disable-domain-reliability',
  '--disable-breakpad',
  '--disable-sync',
  '--disable-extensions',
  '--disable-default-apps',
  '--no-default-browser-check',
  '--no-pings',
  '--metrics-recording-only',
  '--disable-client-side-phishing-detection',
  '--disable-features=NetworkTimeServiceQuerying,OptimizationHints,Translate,MediaRouter,AutofillServerCommunication,SignInProfileCreation,AccountConsistency',
]

/**
 * A Chromium whose only reachable host is loopback: everything else goes to a proxy that records
 * the request line and refuses it, so a page that renders proves it needs no other host.
 * `attempted` lists what the browser tried to reach elsewhere (the page or, whatever the flags,
 * a service of the browser itself: which ones differ between Chromium builds); `foreign` lists only
 * what a watched page itself requested from another host (`watch(page)`: the DevTools protocol's
 * page requests, never the browser's own), which is what tests assert. `close` ends the proxy and
 * the profile.
 */
export async function isolatedChromium() {
  if (!CHROMIUM) throw new Error('chromium is not installed: apt-get install chromium (npm test installs it as root)')
  const attempted: string[] = []
  const proxy = createServer((socket) => {
    socket.once('data', (d) => {
      const line = d.toString('latin1').split('\r\n')[0] ?? ''
      if (!BROWSER_SERVICES.test(line)) attempted.push(line)
      socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n')
    })
    socket.on('error', () => {})
  })
  await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done))
  const port = (proxy.address() as { port: number }).port
  const profile = mkdtempSync(join(tmpdir(), 'gtin-chromium-'))
  const flags = [
    ...QUIET,
    `--proxy-server=http://127.0.0.1:${port}`,
    '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    `--user-data-dir=${profile}`,
  ]
  const browsers: Browser[] = []
  const foreign: string[] = []
  return {
    attempted,
    foreign,
    /** Records the requests `page` makes to any host but loopback (its frames, workers included). */
    watch(page: Page) {
      page.on('request', (request) => {
        const url = new URL(request.url())
        if (
          (url.protocol === 'http:' || url.protocol === 'https:') &&
          !['127.0.0.1', 'localhost'].includes(url.hostname)
        )
          foreign.push(`${request.method()} ${request.url()}`)
      })
      return page
    },
    /** Runs Chromium once with `args` (e.g. --dump-dom URL) and answers its stdout. */
    async run(args: string[]) {
      const proc = Bun.spawn([CHROMIUM!, ...flags, '--virtual-time-budget=15000', ...args], {
        stdout: 'pipe',
        stderr: 'ignore',
        timeout: 60_000,
      })
      const out = await new Response(proc.stdout).text()
      await proc.exited
      return out
    },
    /** A browser driven over the DevTools protocol (puppeteer-core), for pages to interact with. */
    async launch() {
      const browser = await puppeteer.launch({
        executablePath: CHROMIUM!,
        headless: true,
        args: flags.filter((f) => f !== '--headless' && !f.startsWith('--user-data-dir')),
        userDataDir: profile,
      })
      browsers.push(browser)
      return browser
    },
    async close() {
      for (const b of browsers) await b.close().catch(() => {})
      proxy.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}
