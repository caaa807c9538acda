import type { ProductResource } from './resource'

const html = (text: string) => Bun.escapeHTML(text)

/**
 * The page a shopper lands on when a product is recalled without a notice URL of its own: what was
 * recalled, why and since when. Every value is the owner's text, so every value is escaped; the page
 * loads nothing (its Content-Security-Policy allows inline style only).
 */
export function recallNoticePage(product: ProductResource & { recall: NonNullable<ProductResource['recall']> }) {
  const { recall } = product
  const name = product.product_name || `GTIN ${product.gtin}`
  const brand = product.brand ? `<p class="brand">${html(product.brand)}</p>` : ''
  const more = recall.url
    ? `<p><a href="${html(recall.url)}" rel="noopener noreferrer">The full recall notice</a></p>`
    : ''
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Recall: ${html(name)}</title>
<style>
body { font: 1rem/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 40rem; padding: 1.5rem; color: #1a1a1a }
.banner { background: #b00020; color: #fff; padding: .75rem 1rem; border-radius: .25rem; font-weight: 700 }
.brand { color: #555; margin: 0 }
.reason { white-space: pre-wrap; border-left: .25rem solid #b00020; padding-left: 1rem }
</style>
</head>
<body>
<p class="banner" role="alert">This product has been recalled</p>
<h1>${html(name)}</h1>
${brand}
<p>GTIN <span class="gtin">${html(product.gtin)}</span>, recalled <time datetime="${html(recall.recalled_at)}">${html(recall.recalled_at.slice(0, 10))}</time>.</p>
<h2>Why</h2>
<p class="reason">${html(recall.reason)}</p>
${more}
<p>Do not use this product. Follow the instructions above, or contact the seller or brand.</p>
</body>
</html>
`
}
