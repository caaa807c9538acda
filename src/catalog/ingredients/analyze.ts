import type { SubstanceMatch } from '../../db/schema/catalog'

export type IngredientAnalysis = {
  contains: string[]
  mayContain: string[]
  certifications: string[]
  substances: SubstanceMatch[]
}

/** Placeholder until the parser lands. */
export function analyzeIngredients(_text: string): IngredientAnalysis {
  return { contains: [], mayContain: [], certifications: [], substances: [] }
}
