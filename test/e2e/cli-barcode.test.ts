import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { batchItems } from '../support/batches'
import { run } from '../support/process'

const batch = (dir: string, ...args: string[]) =>
  run(['npm', 'run', '-s', 'cli', '--', 'barcode', 'batch', '--input', join(dir, 'gtins.csv'), ...args], {
    DATABASE_URL: '',
  })

describe('cli barcode batch', () => {
  test('renders a CSV to a label sheet with progress lines and reports skipped rows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gtin-cli-'))
    try {
      const items = batchItems(250, 7)
      writeFileSync(
        join(dir, 'gtins.csv'),
        `gtin,label\n${items.map((i) => `${i.gtin},${i.label ?? ''}`).join('\n')}\n`,
      )
      const out = join(dir, 'labels.pdf')
      const r = await batch(dir, '--output', out, '--template', 'letter-3x10')
      expect(r.code).toBe(0)
      expect(r.output).toContain('rendered 250/250')
      expect(r.output).toContain(`row 8 (${items[7]!.gtin}):`)
      expect(r.output).toContain(`247 labels written to ${out}; 3 rows skipped`)
      const info = Bun.spawnSync(['pdfinfo', out]).stdout.toString()
      expect(info).toMatch(/Pages:\s+9\n/) // ceil(247 / 30)

      const bad = await batch(dir, '--output', join(dir, 'x.pdf'), '--module-width', '5')
      expect(bad.code).toBe(2)
      expect(bad.output).toContain('module_width: must be a number between 0.1 and 2')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
