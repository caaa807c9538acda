/**
 * Net content as feeds write it ("1.75 l", "75 cl", "150g", "4.7 oz (133 g)", "57 g/2 oz",
 * "5 x 40 g", "10 x 1.23 oz (35 g)", "1/2 gal (1.89 L)") normalised to one unit per dimension:
 * grams (GRM) for mass, millilitres (MLT) for volume, so that sources agree when they mean the same
 * amount. A metric figure given next to an imperial one is taken as printed; a multipack counts
 * its units ("5 x 40 g" is 200 g).
 */
export type NetContent = { value: number; uom: 'GRM' | 'MLT' | 'EA' }

/** Items counted, not weighed: "1 pièce", "12 pcs", "24 count", "6 ct" (the spec's unit EA). */
const EACH = { uom: 'EA', factor: 1 } as const

const UNITS: Record<string, { uom: NetContent['uom']; factor: number }> = {
  mg: { uom: 'GRM', factor: 0.001 },
  g: { uom: 'GRM', factor: 1 },
  gr: { uom: 'GRM', factor: 1 },
  grm: { uom: 'GRM', factor: 1 },
  gram: { uom: 'GRM', factor: 1 },
  grams: { uom: 'GRM', factor: 1 },
  kg: { uom: 'GRM', factor: 1000 },
  kgm: { uom: 'GRM', factor: 1000 },
  oz: { uom: 'GRM', factor: 28.349523125 },
  onz: { uom: 'GRM', factor: 28.349523125 },
  lb: { uom: 'GRM', factor: 453.59237 },
  lbs: { uom: 'GRM', factor: 453.59237 },
  lbr: { uom: 'GRM', factor: 453.59237 },
  ml: { uom: 'MLT', factor: 1 },
  mlt: { uom: 'MLT', factor: 1 },
  cl: { uom: 'MLT', factor: 10 },
  clt: { uom: 'MLT', factor: 10 },
  dl: { uom: 'MLT', factor: 100 },
  l: { uom: 'MLT', factor: 1000 },
  ltr: { uom: 'MLT', factor: 1000 },
  litre: { uom: 'MLT', factor: 1000 },
  liter: { uom: 'MLT', factor: 1000 },
  litres: { uom: 'MLT', factor: 1000 },
  liters: { uom: 'MLT', factor: 1000 },
  'fl oz': { uom: 'MLT', factor: 29.5735295625 },
  floz: { uom: 'MLT', factor: 29.5735295625 },
  oza: { uom: 'MLT', factor: 29.5735295625 },
  pt: { uom: 'MLT', factor: 473.176473 },
  qt: { uom: 'MLT', factor: 946.352946 },
  gal: { uom: 'MLT', factor: 3785.411784 },
  gll: { uom: 'MLT', factor: 3785.411784 },
  piece: EACH,
  pieces: EACH,
  pièce: EACH,
  pièces: EACH,
  pc: EACH,
  pcs: EACH,
  count: EACH,
  ct: EACH,
  ea: EACH,
}

const NUMBER = String.raw`(\d+(?:[.,]\d+)?(?:\s*/\s*\d+)?)`
// letters of any script ("pièce"); the end of the unit is the end of its letters, as \b knows ASCII only
const UNIT = String.raw`(fl\.?\s*oz|\p{L}+)`
const AMOUNT = new RegExp(String.raw`${NUMBER}\s*${UNIT}(?!\p{L})`, 'giu')
const METRIC = /^(m?g|kg|gr|grams?|[mcd]?l|litres?|liters?)$/i
const PACK = /^\s*(\d+)\s*[x×*]\s*/i

const round = (n: number) => Math.round(n * 100) / 100

function amountOf(number: string, unit: string): NetContent | null {
  const key = unit.normalize('NFC').toLowerCase().replace(/\./g, '').replace(/\s+/g, ' ')
  const known = UNITS[key]
  if (!known) return null
  const [whole, fraction] = number.split('/')
  const value = fraction ? Number(whole!.replace(',', '.')) / Number(fraction) : Number(number.replace(',', '.'))
  if (!Number.isFinite(value) || value <= 0) return null
  return { value: value * known.factor, uom: known.uom }
}

/** The normalised net content of a quantity text, or null when it states none we can read. */
export function parseQuantity(text: string | null | undefined): NetContent | null {
  if (!text) return null
  const pack = PACK.exec(text)
  const count = pack ? Number(pack[1]) : 1
  const rest = pack ? text.slice(pack[0].length) : text
  const amounts = [...rest.matchAll(AMOUNT)]
    .map((m) => ({ amount: amountOf(m[1]!, m[2]!), metric: METRIC.test(m[2]!) }))
    .filter((a): a is { amount: NetContent; metric: boolean } => a.amount !== null)
  if (amounts.length === 0) return null
  // prefer a metric figure where the label prints both ("4.7 oz (133 g)", "57 g/2 oz")
  const chosen = (amounts.find((a) => a.metric) ?? amounts[0]!).amount
  return { value: round(chosen.value * count), uom: chosen.uom }
}

/** A quantity given as number and unit (Open Food Facts' `product_quantity` and its unit). */
export function quantityOf(value: unknown, unit: unknown): NetContent | null {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value.replace(',', '.')) : NaN
  if (!Number.isFinite(n) || n <= 0 || typeof unit !== 'string') return null
  const known = UNITS[unit.normalize('NFC').trim().toLowerCase()]
  return known ? { value: round(n * known.factor), uom: known.uom } : null
}

/** Words a package size may be followed by at the end of a name ("8 fl oz Can"). */
const CONTAINER = String.raw`(?:\s+(?:can|cans|bottle|bottles|jar|box|bag|pack|pouch|carton|cup|tub|tin|tube))?`
const TRAILING_SIZE = new RegExp(
  String.raw`\s*(?:[,\-–]\s*|\s+)(\d+(?:[.,]\d+)?(?:\s*/\s*\d+)?\s*(?:fl\.?\s*oz|\p{L}+))${CONTAINER}\.?\s*$`,
  'iu',
)

/**
 * A name without the package size it ends with ("…Energy Drink, 8 fl oz Can" → "…Energy Drink")
 * when that size is the product's net content (within 1 %): the size is then said by the net
 * content fields, and names of one product from several sources agree. Any other ending stays.
 */
export function withoutPackageSize(name: string | undefined, net: NetContent | null): string | undefined {
  if (!name || !net) return name
  const match = TRAILING_SIZE.exec(name)
  if (!match || match.index === 0) return name
  const size = parseQuantity(match[1])
  if (!size || size.uom !== net.uom || Math.abs(size.value - net.value) > net.value * 0.01) return name
  return name.slice(0, match.index).trimEnd()
}
