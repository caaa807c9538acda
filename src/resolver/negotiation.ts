import Negotiator from 'negotiator'
import type { CompiledRule } from './conditions'

/**
 * What a scan says it prefers: its headers (Accept-Language, Accept), read only when there is a
 * choice to make (most scans have one candidate: the request's Headers are passed as they are).
 */
export type Preferences = { get(name: string): string | null }

export const NO_PREFERENCES: Preferences = { get: () => null }

type Ranking = (available: string[]) => string[]

/**
 * The candidates whose values (languages or media types) the request ranks first, or all of them
 * when the request cannot tell them apart: a header it did not send, values it does not accept,
 * equal preferences (`*`, `*\/*`, equal q). negotiator orders values of equal preference by the
 * order they are offered in, so a value is as good as the best one when, offered first, it wins.
 */
function preferred(candidates: CompiledRule[], values: (rule: CompiledRule) => readonly string[], rank: Ranking) {
  const offered = [...new Set(candidates.flatMap((rule) => values(rule)))]
  if (offered.length < 2) return candidates
  const best = rank(offered)[0]
  if (best === undefined) return candidates
  const top = new Set(offered.filter((value) => value === best || rank([value, best])[0] === value))
  if (top.size === offered.length) return candidates
  const kept = candidates.filter((rule) => values(rule).some((value) => top.has(value)))
  return kept.length ? kept : candidates
}

const languages = (rule: CompiledRule) => rule.hreflang
const mediaTypes = (rule: CompiledRule) => [rule.mediaType]

/**
 * GS1-Conformant Resolver 1.2 (§2.6, multiple links of one type): links of one type and scope are
 * told apart by the request, first its languages against each link's `hreflang`, then its media
 * types against each link's type; what is left is in the rules' order (`order_index`, then age).
 */
export function negotiate(candidates: CompiledRule[], preferences: Preferences): CompiledRule[] {
  if (candidates.length < 2) return candidates
  const acceptLanguage = preferences.get('accept-language')
  const accept = preferences.get('accept')
  if (acceptLanguage === null && accept === null) return candidates
  const headers: Record<string, string> = {}
  if (acceptLanguage !== null) headers['accept-language'] = acceptLanguage
  if (accept !== null) headers.accept = accept
  const negotiator = new Negotiator({ headers })
  const byLanguage = preferred(candidates, languages, (available) => negotiator.languages(available))
  return preferred(byLanguage, mediaTypes, (available) => negotiator.mediaTypes(available))
}
