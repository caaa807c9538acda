/** UN/CEFACT units of net content (GS1 code list). */
export const UOMS = ['MLT', 'CLT', 'LTR', 'GRM', 'KGM', 'ONZ', 'LBR', 'PTI', 'QTI', 'GLL', 'EA'] as const
