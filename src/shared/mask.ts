/** The masked form of a key or secret (spec, contract §5): the first 8 characters followed by `...`. */
export const maskSecret = (value: string) => `${value.slice(0, 8)}...`
