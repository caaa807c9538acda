// GS1's Digital Link toolkit, shipped untyped inside digital-link.js; application-identifiers.ts
// declares the parts it reads.
declare module 'digital-link.js/lib/GS1DigitalLinkCompressionPrototype/GS1DigitalLinkToolkit.js' {
  const GS1DigitalLinkToolkit: new () => unknown
  export default GS1DigitalLinkToolkit
}

declare module 'digital-link.js' {
  export const webVoc: { linkType: Record<string, string> }
}
