import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Resvg } from '@resvg/resvg-js'

/** Runs `work` in a temporary directory of its own, removed afterwards. */
function inTempDir<T>(work: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'gtin-decode-'))
  try {
    return work(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function need(tool: string) {
  if (Bun.spawnSync(['sh', '-c', `command -v ${tool}`]).exitCode !== 0)
    throw new Error(`${tool} is not installed: apt-get install zbar-tools poppler-utils ghostscript (.ci/run does)`)
}

const run = (cmd: string[]) => {
  const r = Bun.spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe' })
  return { code: r.exitCode, out: r.stdout.toString() }
}

/** Decodes a PNG with zbarimg (an independent decoder); UPC-A and UPC-E reported as such. */
export function decodePng(png: Uint8Array): string[] {
  need('zbarimg')
  return inTempDir((dir) => {
    const file = join(dir, 'in.png')
    writeFileSync(file, png)
    const r = run(['zbarimg', '-q', '--raw', '-Supca.enable=1', '-Supce.enable=1', file])
    return r.out.split('\n').filter(Boolean)
  })
}

/** Rasterises and decodes: SVG with resvg, PDF with poppler's pdftoppm, EPS with Ghostscript. */
export function decodeFile(bytes: Uint8Array, format: 'svg' | 'png' | 'pdf' | 'eps'): string[] {
  if (format === 'png') return decodePng(bytes)
  if (format === 'svg') {
    const png = new Resvg(Buffer.from(bytes).toString('utf8'), {
      fitTo: { mode: 'zoom', value: 300 / 96 },
      background: '#ffffff',
    })
      .render()
      .asPng()
    return decodePng(png)
  }
  return inTempDir((dir) => {
    const src = join(dir, `in.${format}`)
    writeFileSync(src, bytes)
    const out = join(dir, 'raster')
    if (format === 'pdf') {
      need('pdftoppm')
      run(['pdftoppm', '-r', '300', '-png', '-singlefile', src, out])
    } else {
      need('gs')
      run([
        'gs',
        '-q',
        '-dSAFER',
        '-dBATCH',
        '-dNOPAUSE',
        '-sDEVICE=png16m',
        '-dEPSCrop',
        '-r300',
        `-sOutputFile=${out}.png`,
        src,
      ])
    }
    return decodePng(new Uint8Array(readFileSync(`${out}.png`)))
  })
}
