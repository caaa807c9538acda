/**
 * How search ranks, in 0-1 (1 is kept for an exact GTIN):
 * - a row whose title (a product's name, brand and GTIN; a brand's or retailer's name) matches every
 *   clause ranks in 0.5-0.99, higher the fewer words the title has besides the query's: "Dark
 *   Chocolate" before "Dark Chocolate with Hazelnuts", as a field-length norm does in BM25;
 * - a row that needs the rest of its document (description, ingredients, category) ranks below
 *   0.5, by the same norm;
 * - a typo match is a title match scaled by how alike the corrected words are (0-1).
 * Title length is stored with the row (`title_len`), so rows can be read in rank order from an index.
 */
const norm = (titleLength: number) => 0.49 / (1 + Math.log(Math.max(1, titleLength)))

export const titleRank = (titleLength: number) => 0.5 + norm(titleLength)
export const bodyRank = (titleLength: number) => norm(titleLength)
