import { num } from './numbers'

/** PostScript and PDF spell the same path operators differently. */
export const POSTSCRIPT = { move: 'moveto', line: 'lineto', curve: 'curveto', close: 'closepath' }
export const PDF = { move: 'm', line: 'l', curve: 'c', close: 'h' }
type Operators = typeof POSTSCRIPT

/**
 * SVG path data (M L C Q Z, absolute) as PostScript/PDF operators, each point mapped by `at`
 * (quadratic segments become cubic ones).
 */
export function convertPath(path: string, at: (x: number, y: number) => [number, number], ops: Operators): string {
  const out: string[] = []
  const tokens = path.match(/[MLCQZ]|-?[\d.]+(?:e-?\d+)?/gi) ?? []
  const pt = (x: number, y: number) => at(x, y).map(num).join(' ')
  let i = 0
  let cx = 0
  let cy = 0
  const next = () => Number(tokens[i++])
  while (i < tokens.length) {
    const op = tokens[i++]
    if (op === 'M' || op === 'L') {
      cx = next()
      cy = next()
      out.push(`${pt(cx, cy)} ${op === 'M' ? ops.move : ops.line}`)
    } else if (op === 'C') {
      const [a, b, c, d, e, f] = [next(), next(), next(), next(), next(), next()]
      out.push(`${pt(a, b)} ${pt(c, d)} ${pt(e, f)} ${ops.curve}`)
      cx = e
      cy = f
    } else if (op === 'Q') {
      const [qx, qy, ex, ey] = [next(), next(), next(), next()]
      const c1 = pt(cx + (2 / 3) * (qx - cx), cy + (2 / 3) * (qy - cy))
      const c2 = pt(ex + (2 / 3) * (qx - ex), ey + (2 / 3) * (qy - ey))
      out.push(`${c1} ${c2} ${pt(ex, ey)} ${ops.curve}`)
      cx = ex
      cy = ey
    } else if (op === 'Z' || op === 'z') out.push(ops.close)
  }
  return out.join('\n')
}
