// Barcode benchmark (issue 5):
//  1. POST /products/api/v1/barcode/ for EAN-13 as svg and as png, concurrency 16, 10 s each;
//  2. a 10,000-label A4 3x8 sheet PDF (the batch renderer, in its own process): time and peak RSS,
//     without and with a label line (multilingual names, set in the embedded DejaVu Sans subset);
//  3. in the same run, Debian's zint CLI writing the same 10,000 EAN-13 PNGs, as the native reference.
//   npm run bench:barcode -- [--seconds 10] [--labels 10000]
// HTTP load from wrk when installed, else fetch in this process; zint from `apt-get install zint`.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { gs1CheckDigit } from '../../src/shared/gs1'
import { haveWrk, measure, measureWithWrk, printTable } from './load'
import { startBenchServer } from './server'

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '10' }, labels: { type: 'string', default: '10000' } },
})
const SECONDS = Number(values.seconds)
const LABELS = Number(values.labels)
const CONCURRENCY = 16
const work = mkdtempSync(join(tmpdir(), 'gtin-bench-barcode-'))

const bench = await startBenchServer()
const { createOrganization } = await import('../../src/accounts/organizations')
const { db } = await import('../../src/db/client')
const { api_key } = await createOrganization(db, { name: 'Bench Print', owner_email: 'print@example.test' })
const url = `${bench.base}/products/api/v1/barcode/`

async function endpoint(format: 'svg' | 'png') {
  const body = JSON.stringify({ gtin: '4006381333931', format })
  const headers = { 'content-type': 'application/json', 'x-api-key': api_key.key }
  const once = () =>
    fetch(url, { method: 'POST', headers, body }).then(
      async (r) => (await r.arrayBuffer()).byteLength > 0 && r.status === 200,
    )
  await measure('warm-up', CONCURRENCY, 1, once)
  const name = `POST /barcode/ EAN-13 ${format}`
  if (!haveWrk()) return measure(name, CONCURRENCY, SECONDS, once)
  const script = join(work, `${format}.lua`)
  writeFileSync(script, `wrk.method = "POST"\nwrk.body = '${body}'\nwrk.headers["Content-Type"] = "application/json"\n`)
  return measureWithWrk(name, url, CONCURRENCY, SECONDS, { 'x-api-key': api_key.key }, script)
}

const svg = await endpoint('svg')
const png = await endpoint('png')

// the same GTINs for both
const gtins = Array.from({ length: LABELS }, (_, i) => {
  const body = `400${String(i).padStart(9, '0')}`
  return body + gs1CheckDigit(body)
})
writeFileSync(join(work, 'gtins.csv'), `gtin\n${gtins.join('\n')}\n`)
writeFileSync(join(work, 'gtins.txt'), `${gtins.join('\n')}\n`)

// the same GTINs again, each with a label line: names in French, German, Spanish, Polish, Greek, Russian
const names = await Bun.file('test/fixtures/label-names.json').json()
const labels: string[] = [
  ...names.off.map((o: { name: string }) => o.name),
  ...names.constructed.map((c: { name: string }) => c.name),
]
const quote = (v: string) => `"${v.replaceAll('"', '""')}"`
writeFileSync(
  join(work, 'labelled.csv'),
  `gtin,label\n${gtins.map((g, i) => `${g},${quote(labels[i % labels.length]!)}`).join('\n')}\n`,
)

/** The CLI's batch command writing a sheet PDF, in its own process: seconds, peak RSS, pages. */
async function sheetRun(csv: string, pdf: string) {
  const t0 = performance.now()
  const run = Bun.spawn(
    [
      process.execPath,
      'scripts/cli/index.ts',
      'barcode',
      'batch',
      '--input',
      join(work, csv),
      '--output',
      join(work, pdf),
    ],
    {
      stdout: 'pipe',
      stderr: 'pipe',
    },
  )
  await run.exited
  const seconds = (performance.now() - t0) / 1000
  const peakMb = (run.resourceUsage()?.maxRSS ?? 0) / 1024 / 1024
  if (run.exitCode !== 0) throw new Error(`sheet rendering failed: ${await new Response(run.stderr).text()}`)
  const pages = Bun.spawnSync(['sh', '-c', `pdfinfo ${join(work, pdf)} 2>/dev/null | grep Pages`])
    .stdout.toString()
    .trim()
  return { seconds, peakMb, pages }
}

const plain = await sheetRun('gtins.csv', 'labels.pdf')
const labelled = await sheetRun('labelled.csv', 'labelled.pdf')
const sheetSeconds = plain.seconds

let zintSeconds: number | null = null
if (Bun.spawnSync(['sh', '-c', 'command -v zint']).exitCode === 0) {
  const out = join(work, 'zint')
  mkdirSync(out)
  const z0 = performance.now()
  const z = Bun.spawnSync([
    'zint',
    '-b',
    '13',
    '--batch',
    '-i',
    join(work, 'gtins.txt'),
    '--filetype=png',
    '-o',
    join(out, '~~~~~.png'),
  ])
  zintSeconds = (performance.now() - z0) / 1000
  if (z.exitCode !== 0 || readdirSync(out).length !== LABELS) throw new Error('zint did not write every PNG')
}

console.log(
  `\nsync endpoint, concurrency ${CONCURRENCY}, ${SECONDS} s each, load from ${haveWrk() ? 'wrk' : 'fetch'}, server log level ${bench.logLevel}\n`,
)
printTable([svg, png])
console.log(`\nPNG p50: ${png.p50.toFixed(2)} ms (target < 10 ms)`)
console.log(
  `\n${LABELS}-label A4 3x8 sheet PDF: ${plain.seconds.toFixed(2)} s, peak RSS ${plain.peakMb.toFixed(0)} MB (target < 500 MB), ${plain.pages}`,
)
console.log(
  `the same with a label line on each (${labels.length} names, 6 languages, embedded font subset): ${labelled.seconds.toFixed(2)} s, peak RSS ${labelled.peakMb.toFixed(0)} MB -> labelled / plain = ${(labelled.seconds / plain.seconds).toFixed(2)}x`,
)
if (zintSeconds !== null)
  console.log(
    `zint 2.11, the same ${LABELS} EAN-13 PNGs: ${zintSeconds.toFixed(2)} s -> sheet / zint = ${(sheetSeconds / zintSeconds).toFixed(2)}x (target <= 3x)`,
  )
else console.log('zint not installed (apt-get install zint): no native reference')

await bench.stop()
rmSync(work, { recursive: true, force: true })
process.exit(0)
