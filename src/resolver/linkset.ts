import type { CompiledRule } from './conditions'
import { DEFAULT_LINK, GS1_VOC, linkTypeTitle } from './formats'
import { NO_PREFERENCES } from './negotiation'
import { anchorOf, defaultCandidates, type Evaluation, type LinkRequest, pick, target, uniqueBy } from './resolve'

export type Link = { href: string; title: string; type?: string; hreflang?: string[] }
type LinksetObject = { anchor: string; itemDescription: string } & Record<string, string | Link[]>
export type Linkset = { linkset: LinksetObject[] }

const DEFAULT_LINK_MULTI = 'gs1:defaultLinkMulti'

const titleOf = (rule: CompiledRule) => rule.title || linkTypeTitle(rule.linkType)

const link = (rule: CompiledRule): Link => ({
  href: target(rule),
  title: titleOf(rule),
  type: rule.mediaType,
  hreflang: rule.hreflang.length ? [...rule.hreflang] : ['en'],
})

/** GS1-Conformant Resolver 1.2: the default link has a title and no other attribute. */
const defaultLink = (rule: CompiledRule): Link => ({ href: target(rule), title: titleOf(rule) })

const relation = (linkType: string) => `${GS1_VOC}${linkType.replace(/^gs1:/, '')}`

/**
 * The levels of a Digital Link URI, most specific first, as GS1's walk-up goes: the serial, the lot
 * (each as far as the request names it), then the GTIN itself, with the rules each level holds.
 * Rules of the product, its brand and its organization (and a recall) are the GTIN's.
 */
function levelsOf(request: LinkRequest) {
  const { gtin, cpv, lot, serial } = request
  const levels: { request: LinkRequest; scopes: (rule: CompiledRule) => boolean; what: string }[] = []
  if (serial !== undefined)
    levels.push({ request, scopes: (r) => r.scopeType === 'SERIAL', what: `serial number ${serial}` })
  if (lot !== undefined)
    levels.push({ request: { gtin, cpv, lot }, scopes: (r) => r.scopeType === 'BATCH', what: `lot ${lot}` })
  levels.push({ request: { gtin }, scopes: (r) => r.scopeType !== 'SERIAL' && r.scopeType !== 'BATCH', what: '' })
  return levels
}

/**
 * The RFC 9264 linkset of every link that holds now, one object per level of the URI that has links
 * (GS1-Conformant Resolver 1.2, walk-up: the serial's, the lot's, the GTIN's), each anchored at that
 * level's URI. In each object, per link type, the links of the most specific scope of that level
 * offering it. A level's default link is in its object when that level holds it (else a wider
 * level's object has it): exactly one `gs1:defaultLink`, with a title only, and, when the request's
 * languages or media types choose among several default links, all of them as
 * `gs1:defaultLinkMulti`. `itemDescription` (GS1's linkset schema requires it) names each level's
 * item: the product's name (its GTIN when it has none), with the lot or serial.
 */
export function linksetOf(
  origin: string,
  request: LinkRequest,
  product: string,
  evaluations: Evaluation[],
): Linkset | null {
  const levels = levelsOf(request)
  const objects: LinksetObject[] = []
  levels.forEach((level, at) => {
    // what a request for this level's URI sees: its rules and those of the wider levels
    const seen = evaluations.filter(({ rule }) => levels.slice(at).some((l) => l.scopes(rule)))
    const own = seen.filter(({ rule, failed }) => failed === null && level.scopes(rule)).map(({ rule }) => rule)
    if (own.length === 0) return
    const object: LinksetObject = {
      anchor: anchorOf(origin, level.request),
      itemDescription: level.what ? `${product}, ${level.what}` : product,
    }
    const defaults = defaultCandidates(seen)
    if (defaults.length > 0 && level.scopes(defaults[0]!)) {
      object[relation(DEFAULT_LINK)] = [defaultLink(pick(defaults, NO_PREFERENCES)[0]!)]
      const all = uniqueBy(defaults.map(link), (l) => l.href)
      if (all.length > 1) object[relation(DEFAULT_LINK_MULTI)] = all
    }
    const typed = new Map<string, CompiledRule[]>()
    for (const rule of own) {
      if (rule.linkType === DEFAULT_LINK) continue
      const list = typed.get(rule.linkType)
      if (!list) typed.set(rule.linkType, [rule])
      else if (list[0]!.specificity === rule.specificity) list.push(rule)
    }
    for (const type of [...typed.keys()].sort())
      object[relation(type)] = uniqueBy(typed.get(type)!.map(link), (l) => l.href)
    objects.push(object)
  })
  return objects.length ? { linkset: objects } : null
}

/** A linkset of the tied choices of a 300 answer, under their link type. */
export function choicesOf(anchor: string, product: string, rules: CompiledRule[], linkType: string): Linkset {
  return { linkset: [{ anchor, itemDescription: product, [relation(linkType)]: rules.map(link) }] }
}
