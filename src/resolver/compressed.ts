/// <reference path="../shared/digital-link-toolkit.d.ts" />
import GS1DigitalLinkToolkit from 'digital-link.js/lib/GS1DigitalLinkCompressionPrototype/GS1DigitalLinkToolkit.js'

/** The parts of GS1's Digital Link toolkit (shipped in digital-link.js) read here. */
type Toolkit = {
  extractFromCompressedGS1digitalLink(uri: string): { GS1: Record<string, string>; other: Record<string, string> }
  buildGS1digitalLink(
    gs1: Record<string, string>,
    useShortText: boolean,
    uriStem: string,
    other: Record<string, string>,
  ): string
}

const toolkit = new GS1DigitalLinkToolkit() as unknown as Toolkit

/** base64url, as GS1 Digital Link compression writes; a GTIN alone takes 10 characters. */
const COMPRESSED = /^[A-Za-z0-9_-]{8,512}$/
const STEM = 'https://resolver.invalid'

/**
 * The uncompressed Digital Link path and query (`/01/00614141000012?17=290101`) of a compressed
 * one's path segment (`AQEd-0_ymA`, GS1 Digital Link URI Syntax 1.x §7, decompressed by GS1's
 * toolkit), or null when the segment is no compressed Digital Link URI of a GTIN: the caller then
 * answers as for an unknown path. The result is checked as any uncompressed request is.
 */
export function decompressedPath(segment: string): string | null {
  if (!COMPRESSED.test(segment)) return null
  let uri: string
  try {
    const { GS1, other } = toolkit.extractFromCompressedGS1digitalLink(`${STEM}/${segment}`)
    if (GS1['01'] === undefined) return null
    uri = toolkit.buildGS1digitalLink(GS1, false, STEM, other)
  } catch {
    // the toolkit throws on any bit string that is not a compressed element string
    return null
  }
  return uri.startsWith(`${STEM}/01/`) ? uri.slice(STEM.length) : null
}
