import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { Enum } from '../shared/schema-types'
import { BARCODE_TYPES } from './symbology'

export const FORMATS = ['svg', 'png', 'eps', 'pdf'] as const
export type Format = (typeof FORMATS)[number]

/** The parameters of spec #8 with their bounds; defaults are applied by `withDefaults`. */
export const symbolOptions = {
  barcode_type: t.Optional(
    Enum(BARCODE_TYPES, { description: 'default auto: 8 digits EAN-8, 12 UPC-A, 13 EAN-13, 14 ITF-14, (AI)… GS1-128' }),
  ),
  format: t.Optional(Enum(FORMATS, { description: 'default svg' })),
  module_width: t.Optional(Type.Number({ minimum: 0.1, maximum: 2, description: 'mm, default 0.33; narrowest bar' })),
  module_height: t.Optional(Type.Number({ minimum: 1, maximum: 100, description: 'mm, default 25; bar height' })),
  font_size: t.Optional(Type.Number({ minimum: 4, maximum: 24, description: 'pt, default 10; below 8 compact text' })),
  quiet_zone: t.Optional(
    Type.Number({ minimum: 0, maximum: 20, description: 'mm, default 6.5; 0 drops margins and < > markers' }),
  ),
  write_text: t.Optional(t.Boolean({ description: 'default true' })),
  embed_font: t.Optional(
    t.Boolean({ description: 'default true; SVG text as OCR-B outlines (false: font-family OCR-B)' }),
  ),
  dpi: t.Optional(Type.Integer({ minimum: 72, maximum: 1200, description: 'PNG resolution, default 300' })),
}

export const BarcodeRequest = t.Object(
  {
    gtin: t.String({
      minLength: 1,
      maxLength: 100,
      description: 'GTIN of 8, 12, 13 or 14 digits, or an AI-bracketed string for GS1-128',
    }),
    ...symbolOptions,
  },
  { additionalProperties: false },
)
export type BarcodeRequest = typeof BarcodeRequest.static

export type SymbolSettings = Required<Omit<BarcodeRequest, 'gtin'>>

export const withDefaults = (r: Partial<Omit<BarcodeRequest, 'gtin'>>): SymbolSettings => ({
  barcode_type: r.barcode_type ?? 'auto',
  format: r.format ?? 'svg',
  module_width: r.module_width ?? 0.33,
  module_height: r.module_height ?? 25,
  font_size: r.font_size ?? 10,
  quiet_zone: r.quiet_zone ?? 6.5,
  write_text: r.write_text ?? true,
  embed_font: r.embed_font ?? true,
  dpi: r.dpi ?? 300,
})
