import { toShortId } from '../shared/ids'
import { type CompiledRule, failedCondition, type Place } from './conditions'
import { DEFAULT_LINK, GS1_VOC, linkTypeTitle } from './formats'
import type { ProductRef } from './rule-index'

/** A parsed GS1 Digital Link request for a GTIN (with its key qualifiers, any subset, in order). */
export type LinkRequest = { gtin: string; cpv?: string; lot?: string; serial?: string }

/** A GTIN's key qualifiers that rules can name, in Digital Link order: AI and request field. */
export const KEY_QUALIFIERS = [
  ['22', 'cpv'],
  ['10', 'lot'],
  ['21', 'serial'],
] as const

export type Link = { href: string; title: string; type: string; hreflang: string[] }
export type Linkset = { linkset: [{ anchor: string } & Record<string, string | Link[]>] }

export type Outcome =
  | { kind: 'redirect'; rule: CompiledRule }
  | { kind: 'choices'; rules: CompiledRule[]; linkType: string }
  | { kind: 'none'; reason: string }

/** Each rule that may apply, and the first of its conditions that does not hold (null: it holds). */
export type Evaluation = { rule: CompiledRule; failed: string | null }

export function evaluate(rules: CompiledRule[], ms: number, place: Place): Evaluation[] {
  return rules.map((rule) => ({ rule, failed: failedCondition(rule, ms, place) }))
}

const applicable = (evaluations: Evaluation[]) => evaluations.filter((e) => e.failed === null).map((e) => e.rule)

/** The first of each group of items with the same key, in order. */
function uniqueBy<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>()
  return items.filter((item) => !seen.has(key(item)) && Boolean(seen.add(key(item))))
}

/**
 * The best applicable rule of `linkType` (null: of any type) and every other rule tied with it on
 * scope and order with another target; empty when none applies. One pass, no intermediate lists:
 * this runs for every scan.
 */
function bestOf(evaluations: Evaluation[], linkType: string | null): CompiledRule[] {
  let first: CompiledRule | undefined
  let tied: CompiledRule[] | undefined
  for (const { rule, failed } of evaluations) {
    if (failed !== null || (linkType !== null && rule.linkType !== linkType)) continue
    if (first === undefined) first = rule
    else if (rule.specificity === first.specificity && rule.orderIndex === first.orderIndex) {
      tied ??= [first]
      tied.push(rule)
    }
  }
  if (first === undefined) return []
  return tied ? uniqueBy(tied, target) : [first]
}

/** The default link: the best `gs1:defaultLink` rule, or the best rule of any type when there is none. */
function defaults(evaluations: Evaluation[]): CompiledRule[] {
  const own = bestOf(evaluations, DEFAULT_LINK)
  return own.length ? own : bestOf(evaluations, null)
}

/**
 * What a scan resolves to (GS1-Conformant Resolver 1.2, §2.6): the requested link type, or the
 * default link; the most specific scope wins, then the lowest `order_index`; rules tied on both
 * with different targets are a choice (300).
 */
export function choose(evaluations: Evaluation[], linkType: string | undefined): Outcome {
  const picked = linkType === undefined ? defaults(evaluations) : bestOf(evaluations, linkType)
  if (picked.length === 0)
    return evaluations.some((e) => e.failed === null)
      ? { kind: 'none', reason: `no link of type ${linkType} for this product` }
      : { kind: 'none', reason: 'no rule of this product holds now and here' }
  if (picked.length === 1) return { kind: 'redirect', rule: picked[0]! }
  return {
    kind: 'choices',
    rules: picked,
    linkType: linkType ?? (picked.every((r) => r.linkType === DEFAULT_LINK) ? 'gs1:defaultLinkMulti' : DEFAULT_LINK),
  }
}

/** The rule's target with its section anchor as the fragment. */
export function target(rule: CompiledRule): string {
  if (!rule.anchor) return rule.href
  const hash = rule.href.indexOf('#')
  return `${hash === -1 ? rule.href : rule.href.slice(0, hash)}#${rule.anchor}`
}

/** The resolver's own query parameters: not passed on. */
const CONTROL_PARAMETERS = ['linkType', 'explain', 'country', 'region', 'city']

/** The request's query less the resolver's own parameters; the query itself when it has none (most scans). */
function passedOn(query: URLSearchParams): URLSearchParams {
  if (!CONTROL_PARAMETERS.some((name) => query.has(name))) return query
  const passed = new URLSearchParams()
  for (const [k, v] of query) if (!CONTROL_PARAMETERS.includes(k)) passed.append(k, v)
  return passed
}

/** The target with the request's query passed on (GS1 Resolver §2.12), less the resolver's own parameters. */
export function redirectTarget(rule: CompiledRule, query: URLSearchParams): string {
  const own = target(rule)
  if (query.size === 0) return own
  const extra = passedOn(query).toString()
  if (!extra) return own
  const hash = own.indexOf('#')
  const base = hash === -1 ? own : own.slice(0, hash)
  const fragment = hash === -1 ? '' : own.slice(hash)
  return `${base}${base.includes('?') ? '&' : '?'}${extra}${fragment}`
}

const link = (rule: CompiledRule): Link => ({
  href: target(rule),
  title: rule.title || linkTypeTitle(rule.linkType),
  type: rule.mediaType,
  hreflang: rule.hreflang.length ? [...rule.hreflang] : ['en'],
})

const relation = (linkType: string) => `${GS1_VOC}${linkType.replace(/^gs1:/, '')}`

/** The request's canonical Digital Link URI on this resolver: the linkset's anchor. */
export function anchorOf(origin: string, request: LinkRequest): string {
  let uri = `${origin}/01/${request.gtin}`
  for (const [ai, field] of KEY_QUALIFIERS)
    if (request[field] !== undefined) uri += `/${ai}/${encodeURIComponent(request[field]!)}`
  return uri
}

/**
 * The RFC 9264 linkset of every link that holds now: for each link type, the rules of the most
 * specific scope that offers it, and exactly one `gs1:defaultLink`. `itemDescription`, which GS1's
 * linkset schema requires, names the item (the product's name; its GTIN when it has none).
 */
export function linksetOf(anchor: string, itemDescription: string, evaluations: Evaluation[]): Linkset | null {
  const rules = applicable(evaluations)
  if (rules.length === 0) return null
  const set: { anchor: string } & Record<string, string | Link[]> = { anchor, itemDescription }
  set[relation(DEFAULT_LINK)] = [link(defaults(evaluations)[0]!)]
  const typed = new Map<string, CompiledRule[]>()
  for (const rule of rules) {
    if (rule.linkType === DEFAULT_LINK) continue
    const list = typed.get(rule.linkType)
    if (!list) typed.set(rule.linkType, [rule])
    else if (list[0]!.specificity === rule.specificity) list.push(rule)
  }
  for (const type of [...typed.keys()].sort()) {
    const links = typed.get(type)!.map(link)
    set[relation(type)] = uniqueBy(links, (l) => l.href)
  }
  return { linkset: [set] }
}

/** A linkset of the tied choices of a 300 answer, under their link type. */
export function choicesOf(anchor: string, rules: CompiledRule[], linkType: string): Linkset {
  return { linkset: [{ anchor, [relation(linkType)]: rules.map(link) }] }
}

/** `?explain=1`: which rules were considered, which condition failed, and what was chosen. */
export function explanation(
  request: LinkRequest,
  product: ProductRef,
  linkType: string | undefined,
  at: Date,
  place: Place,
  evaluations: Evaluation[],
  outcome: Outcome,
) {
  const chosen = outcome.kind === 'redirect' ? [outcome.rule] : outcome.kind === 'choices' ? outcome.rules : []
  return {
    request: {
      gtin: request.gtin,
      cpv: request.cpv ?? null,
      lot: request.lot ?? null,
      serial: request.serial ?? null,
      link_type: linkType ?? null,
      at: at.toISOString(),
      place,
    },
    product_id: toShortId(product.id),
    outcome:
      outcome.kind === 'none'
        ? { status: 404, reason: outcome.reason }
        : { status: outcome.kind === 'redirect' ? 307 : 300 },
    chosen: chosen.map((r) => ({
      rule_id: toShortId(r.id),
      scope_type: r.scopeType,
      order_index: r.orderIndex,
      link_type: r.linkType,
      target: target(r),
    })),
    considered: evaluations.map(({ rule, failed }) => ({
      rule_id: toShortId(rule.id),
      scope_type: rule.scopeType,
      order_index: rule.orderIndex,
      link_type: rule.linkType,
      holds: failed === null,
      failed_condition: failed,
    })),
  }
}
