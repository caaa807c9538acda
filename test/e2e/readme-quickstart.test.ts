import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from 'pg'
import { livePort } from '../../src/db/postmaster'
import { freePort, ROOT, run, start, waitForHealth } from '../support/process'

// The README's quick start, run as written: its fenced block is taken from README.md and run
// command by command in one bash (so its exports carry on), against `npm start` on a fresh
// DATA_DIR, as a newcomer would in a second terminal. The only change is the port: the README's
// http://localhost:3000 becomes the free port this test's server got (and the receiver's port
// comes from WEBHOOK_RECEIVER_PORT), since other tests run beside this one on the same machine.
const dataDir = mkdtempSync(join(tmpdir(), 'gtin-readme-data-'))
// the newcomer's clone: the repository's entries linked into a folder of its own, so that what the
// commands write (acme.json, labels.pdf) lands there and not in the working tree
const clone = mkdtempSync(join(tmpdir(), 'gtin-readme-clone-'))
for (const entry of readdirSync(ROOT)) if (!entry.startsWith('.')) symlinkSync(join(ROOT, entry), join(clone, entry))
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(clone, { recursive: true, force: true })
})

/** The commands of the README's quick start: the first sh block under "## Quick start". */
function quickStart(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const section = readme.split(/^## /m).find((s) => s.startsWith('Quick start\n'))
  const block = section?.match(/```sh\n([\s\S]*?)```/)?.[1]
  if (!block) throw new Error('README.md has no sh block under "## Quick start"')
  return block.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('#'))
}

/** Each command's output, by its index in the block (the script prints a marker before each). */
function byCommand(output: string): string[] {
  const parts: string[] = []
  for (const chunk of output.split(/^@@@ (?=\d+$)/m).slice(1)) {
    const [index, ...rest] = chunk.split('\n')
    parts[Number(index)] = rest.join('\n')
  }
  return parts
}

test('the README quick start, as written: organization, sample feeds, search, label sheet, webhook, Digital Link scan', async () => {
  const commands = quickStart()
  expect(commands.length).toBeGreaterThanOrEqual(6)
  const port = await freePort()
  const receiverPort = await freePort()
  // development (the default of a fresh clone) lets webhooks go to http:// on loopback
  const env = { DATA_DIR: dataDir, DATABASE_URL: '', NODE_ENV: 'development', APP_ENV: '' }
  const server = start(['npm', 'start'], { ...env, PORT: String(port), HOST: '127.0.0.1' }, { cwd: clone })
  try {
    await waitForHealth(`http://127.0.0.1:${port}`, 60_000).catch((e) => {
      throw new Error(`${e.message}: ${server.output()}`)
    })
    const script = commands
      .map((c, i) => `printf '\\n@@@ ${i}\\n'\n${c.replaceAll('localhost:3000', `localhost:${port}`)}`)
      .join('\n')
    const shell = start(
      ['bash', '-euo', 'pipefail', '-c', script],
      { ...env, WEBHOOK_RECEIVER_PORT: String(receiverPort), CATALOG_URL: `http://localhost:${port}` },
      { cwd: clone },
    )
    const code = await shell.exited
    if (code !== 0) console.error(`quick start output:\n${shell.output()}\nserver:\n${server.output().slice(-4000)}`)
    expect(code).toBe(0)
    const out = byCommand(shell.stdout())
    const at = (needle: string) => out[commands.findIndex((c) => c.includes(needle))] ?? ''

    // what the commands left in the database
    const pgPort = livePort(join(dataDir, 'pg'))
    expect(pgPort).not.toBeNull()
    const sql = new Client({ connectionString: `postgres://postgres:postgres@127.0.0.1:${pgPort}/postgres` })
    await sql.connect()
    const rows = async (text: string, values: unknown[] = []) => (await sql.query(text, values)).rows
    try {
      // 1. the organization, its key in acme.json
      const acme = JSON.parse(readFileSync(join(clone, 'acme.json'), 'utf8')) as Record<string, string>
      expect(Object.keys(acme)).toEqual(['organization_id', 'api_key', 'role'])
      const [org] = await rows(`select id from organizations where name = 'Acme'`)
      expect(org).toBeDefined()

      // 2. both sample feeds imported as the platform, the OFF sample's malformed line rejected
      const runs = await rows(`select source, status from feed_runs order by created`)
      expect(runs.map((r) => [r.source, r.status])).toEqual([
        ['off', 'succeeded'],
        ['usda', 'succeeded'],
      ])
      expect(at('--source off')).toMatch(/rejected/i)
      // a product of each sample (OFF: the oatmeal of examples/labels.csv; USDA: a granola of its download)
      const imported = await rows(
        `select gtin from products where gtin in ('00041303002018', '00851893004015') order by gtin`,
      )
      expect(imported.map((r) => r.gtin)).toEqual(['00041303002018', '00851893004015'])

      // 3. search finds an imported product
      const search = JSON.parse(at('/catalog/api/v1/search')) as { results: { name: string }[] }
      expect(search.results.length).toBeGreaterThan(0)
      expect(search.results[0]!.name).toMatch(/oatmeal/i)

      // 4. the label sheet: a PDF whose text holds the labels
      const pdf = readFileSync(join(clone, 'labels.pdf'))
      expect(pdf.subarray(0, 5).toString()).toBe('%PDF-')
      const text = await run(['pdftotext', join(clone, 'labels.pdf'), '-'], {})
      expect(text.code).toBe(0)
      expect(text.stdout).toContain('Organic Whole Milk')

      // 5. the receiver got a signed delivery, stored as succeeded; its endpoint is gone again
      expect(at('webhook-receiver')).toMatch(/received webhook\.test .*signature valid/)
      const deliveries = await rows(
        `select d.status, e.deleted_at from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id where e.organization_id = $1`,
        [org.id],
      )
      expect(deliveries.map((d) => d.status)).toEqual(['succeeded'])
      expect(deliveries[0].deleted_at).not.toBeNull()

      // 6. the product, its rule, and the scan that follows it
      expect(JSON.parse(at('/products/api/v1/products'))).toMatchObject({ gtin: '00614141000012' })
      const [rule] = await rows(`select custom_url from resolution_rules where organization_id = $1`, [org.id])
      expect(rule.custom_url).toBe('https://acme.example/products')
      expect(at('/01/').trim()).toBe('307 https://acme.example/products')
    } finally {
      await sql.end()
    }
  } finally {
    server.kill('SIGTERM')
    await server.exited
  }
}, 300_000)
