import { readFileSync } from 'node:fs'

/**
 * The GS1 Web Vocabulary's link types, read from a vendored extract of the vocabulary
 * (`gs1-web-vocabulary-link-types.jsonld` beside this file: every property of GS1 Web Vocabulary
 * 1.16 whose `rdfs:subPropertyOf` is `gs1:linkType`, nodes copied unchanged from
 * https://github.com/gs1/WebVoc `v1.16/gs1Voc.jsonld` at commit 36fd193, the vocabulary published at
 * https://ref.gs1.org/voc/, last modified 2025-08-01; taken 2026-11-27). A list typed by hand (or
 * an old library's) falls behind the ratified set: digital-link.js's lacked gs1:dpp, gs1:eifu and
 * six more. To update, replace the file with the same extract of a newer release.
 */

type Node = { '@id': string; 'rdfs:subPropertyOf'?: { '@id': string } | { '@id': string }[] }

const vocabulary = JSON.parse(
  readFileSync(new URL('./gs1-web-vocabulary-link-types.jsonld', import.meta.url), 'utf8'),
) as { '@graph': Node[] }

const isLinkType = (node: Node) => [node['rdfs:subPropertyOf'] ?? []].flat().some((p) => p['@id'] === 'gs1:linkType')

/** Every link type of the vocabulary, in CURIE form (`gs1:pip`). */
export const LINK_TYPES: ReadonlySet<string> = new Set(
  vocabulary['@graph'].filter(isLinkType).map((node) => node['@id']),
)
