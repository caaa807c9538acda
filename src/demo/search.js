// The instant-search page: asks the service's catalog search as the user types. Requests wait for
// a short pause in typing, and each keystroke or filter change aborts the request before it, so
// a stale answer is never shown and at most one request is in flight.
const DEBOUNCE_MS = 120
const SEARCH = '/catalog/api/v1/search'

const input = document.getElementById('q')
const results = document.getElementById('results')
const status = document.getElementById('status')
const vocabulary = JSON.parse(document.getElementById('vocabulary').textContent)

let timer = 0
let inflight = null

function element(tag, className, text) {
  const node = document.createElement(tag)
  if (className) node.className = className
  if (text !== undefined) node.textContent = text
  return node
}

for (const [name, values] of Object.entries(vocabulary)) {
  const fieldset = document.getElementById(name)
  for (const value of values) {
    const label = element('label', 'chip')
    const box = element('input')
    box.type = 'checkbox'
    box.name = name
    box.value = value
    label.append(box, value)
    fieldset.append(label)
  }
}

function query() {
  const params = new URLSearchParams({ q: input.value.trim(), limit: '20' })
  for (const box of document.querySelectorAll('#filters input:checked')) params.append(box.name, box.value)
  return params
}

function setBusy(busy) {
  document.body.setAttribute('aria-busy', String(busy))
}

function details(row) {
  if (row.type === 'product') {
    const parts = [`GTIN ${row.gtin}`]
    if (row.brand) parts.push(row.brand)
    if (row.contains_allergens.length) parts.push(`contains ${row.contains_allergens.join(', ')}`)
    if (row.certifications.length) parts.push(row.certifications.join(', '))
    for (const flag of row.substance_flags) parts.push(`maybe ${flag.slug} (“${flag.span}”)`)
    return parts.join(' · ')
  }
  if (row.type === 'brand') return `${row.product_count} ${row.product_count === 1 ? 'product' : 'products'}`
  return [row.website, row.is_online ? 'online' : '', row.is_physical ? 'stores' : ''].filter(Boolean).join(' · ')
}

function render(params, rows) {
  results.replaceChildren(
    ...rows.map((row) => {
      const item = element('li', 'row')
      item.dataset.type = row.type
      item.dataset.match = row.match
      if (row.type === 'product') item.dataset.allergens = row.contains_allergens.join(' ')
      item.append(
        element('span', 'type', row.type),
        element('span', 'name', row.name),
        element('span', `match match-${row.match}`, row.match),
        element('span', 'meta', details(row)),
      )
      return item
    }),
  )
  results.dataset.query = params.toString()
  const q = params.get('q')
  status.textContent = q ? `${rows.length} ${rows.length === 1 ? 'result' : 'results'} for “${q}”` : ''
  status.classList.remove('error')
}

function showProblem(problem, response) {
  const retry = response.headers.get('retry-after')
  status.textContent = problem.detail ?? `search failed (${response.status})`
  if (retry) status.textContent += `; try again in ${retry} s`
  status.classList.add('error')
}

async function run(params) {
  const controller = new AbortController()
  inflight = controller
  try {
    const response = await fetch(`${SEARCH}?${params}`, {
      signal: controller.signal,
      headers: { accept: 'application/json' },
    })
    const body = await response.json()
    if (controller !== inflight) return
    if (response.ok) render(params, body.results)
    else showProblem(body, response)
  } catch (err) {
    if (err.name === 'AbortError') return
    status.textContent = 'the service cannot be reached'
    status.classList.add('error')
  } finally {
    if (controller === inflight) {
      inflight = null
      setBusy(false)
    }
  }
}

/** Every change of the text or the filters: drop what is pending, then ask after a pause. */
function schedule() {
  clearTimeout(timer)
  inflight?.abort()
  inflight = null
  const params = query()
  if (!params.get('q')) {
    setBusy(false)
    render(params, [])
    return
  }
  setBusy(true)
  timer = setTimeout(() => run(params), DEBOUNCE_MS)
}

input.addEventListener('input', schedule)
document.getElementById('filters').addEventListener('change', schedule)
input.addEventListener('keydown', (event) => {
  if (event.key === 'Escape') {
    input.value = ''
    schedule()
  }
})
if (input.value) schedule()
input.focus()
