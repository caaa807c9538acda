import { toShortId } from '../shared/ids'
import { type CompiledRule, failedCondition, type Place } from './conditions'
import { DEFAULT_LINK } from './formats'
import { NO_PREFERENCES, negotiate, type Preferences } from './negotiation'
import type { ProductRef } from './rule-index'

/** A parsed GS1 Digital Link request for a GTIN (with its key qualifiers, any subset, in order). */
export type LinkRequest = { gtin: string; cpv?: string; lot?: string; serial?: string }

/** A GTIN's key qualifiers that rules can name, in Digital Link order: AI and request field. */
export const KEY_QUALIFIERS = [
  ['22', 'cpv'],
  ['10', 'lot'],
  ['21', 'serial'],
] as const

export type Outcome =
  | { kind: 'redirect'; rule: CompiledRule }
  | { kind: 'choices'; rules: CompiledRule[]; linkType: string }
  | { kind: 'none'; reason: string; status?: 400 }

/** Each rule that may apply, and the first of its conditions that does not hold (null: it holds). */
export type Evaluation = { rule: CompiledRule; failed: string | null }

export function evaluate(rules: CompiledRule[], ms: number, place: Place): Evaluation[] {
  return rules.map((rule) => ({ rule, failed: failedCondition(rule, ms, place) }))
}

/** The first of each group of items with the same key, in order. */
export function uniqueBy<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>()
  return items.filter((item) => !seen.has(key(item)) && Boolean(seen.add(key(item))))
}

/**
 * The applicable rules of `linkType` (null: of any type) of the most specific scope that has one,
 * in the rules' order (`order_index`, then age). Evaluations come most specific scope first.
 */
export function candidatesOf(evaluations: Evaluation[], linkType: string | null): CompiledRule[] {
  const out: CompiledRule[] = []
  for (const { rule, failed } of evaluations) {
    if (failed !== null || (linkType !== null && rule.linkType !== linkType)) continue
    if (out.length > 0 && rule.specificity !== out[0]!.specificity) break
    out.push(rule)
  }
  return out
}

/**
 * The default link's candidates: the `gs1:defaultLink` rules, or, when none applies, the rules of
 * the best applicable rule's link type, which stands in for the default.
 */
export function defaultCandidates(evaluations: Evaluation[]): CompiledRule[] {
  const own = candidatesOf(evaluations, DEFAULT_LINK)
  if (own.length > 0) return own
  const first = firstApplicable(evaluations)
  return first ? candidatesOf(evaluations, first.linkType) : []
}

function firstApplicable(evaluations: Evaluation[]): CompiledRule | undefined {
  for (const { rule, failed } of evaluations) if (failed === null) return rule
  return undefined
}

/**
 * The only candidate of `linkType` (candidatesOf), null when there is none, undefined when there
 * are several: most scans have one, and are answered without building a list (this runs for
 * every scan).
 */
function soleCandidate(evaluations: Evaluation[], linkType: string): CompiledRule | null | undefined {
  let first: CompiledRule | null = null
  for (const { rule, failed } of evaluations) {
    if (failed !== null || rule.linkType !== linkType) continue
    if (first === null) first = rule
    else return rule.specificity === first.specificity ? undefined : first
  }
  return first
}

/**
 * The candidate the request is sent to: the request's languages and media types narrow them
 * (negotiate), then the lowest `order_index` wins (then the oldest); candidates left tied on all of
 * these with different targets are all returned (a 300 choice).
 */
export function pick(candidates: CompiledRule[], preferences: Preferences): CompiledRule[] {
  if (candidates.length < 2) return candidates
  const kept = negotiate(candidates, preferences)
  const first = kept[0]!
  const tied = kept.filter((rule) => rule.orderIndex === first.orderIndex)
  return tied.length === 1 ? tied : uniqueBy(tied, target)
}

/**
 * What a scan resolves to (GS1-Conformant Resolver 1.2, §2.6): the requested link type, or the
 * default link; the most specific scope wins, then the request's languages and media types against
 * the links' `hreflang` and type, then the lowest `order_index`; rules tied on all of these with
 * different targets are a choice (300).
 */
export function choose(
  evaluations: Evaluation[],
  linkType: string | undefined,
  preferences: Preferences = NO_PREFERENCES,
): Outcome {
  let type = linkType ?? DEFAULT_LINK
  let sole = soleCandidate(evaluations, type)
  if (sole === null && linkType === undefined) {
    // no default link applies: the best applicable rule's type stands in for it
    const first = firstApplicable(evaluations)
    if (first) {
      type = first.linkType
      sole = soleCandidate(evaluations, type)
    }
  }
  if (sole) return { kind: 'redirect', rule: sole }
  const picked = sole === null ? [] : pick(candidatesOf(evaluations, type), preferences)
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

/** The request's canonical Digital Link URI on this resolver: the linkset's anchor. */
export function anchorOf(origin: string, request: LinkRequest): string {
  let uri = `${origin}/01/${request.gtin}`
  for (const [ai, field] of KEY_QUALIFIERS)
    if (request[field] !== undefined) uri += `/${ai}/${encodeURIComponent(request[field]!)}`
  return uri
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
        ? { status: outcome.status ?? 404, reason: outcome.reason }
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
