/** A length with at most 4 decimals and no trailing zeros. */
export const num = (n: number) => String(Math.round(n * 10_000) / 10_000)
export const MM_TO_PT = 72 / 25.4
