// A local stand-in for a Typesense server (Typesense cannot run on these machines). It checks each
// request against Typesense's documented API (typesense.org/docs/29.0/api: collections, documents
// import, delete by filter, multi_search, API keys and scoped search keys), answers in the documented
// shapes, and keeps documents in memory with a small, literal search: enough to test what our client
// sends and how we map answers.

import { ApiError, type Doc, fail, parseFilter, type Schema } from './typesense-fake-filter'
import { fakeKeyStore } from './typesense-fake-keys'

export type Recorded = { method: string; path: string; query: Record<string, string>; body: unknown }

const TYPES = new Set(['string', 'string[]', 'int32', 'int64', 'float', 'bool', 'bool[]', 'int32[]', 'object', 'auto'])
const IMPORT_ACTIONS = new Set(['create', 'upsert', 'update', 'emplace'])

const fold = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()
const tokens = (s: string) =>
  fold(s)
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)

function typeOk(type: string, v: unknown): boolean {
  if (type === 'string') return typeof v === 'string'
  if (type === 'string[]') return Array.isArray(v) && v.every((x) => typeof x === 'string')
  if (type === 'int32' || type === 'int64') return Number.isInteger(v)
  if (type === 'bool') return typeof v === 'boolean'
  return true
}

/** Damerau-Levenshtein (optimal string alignment) distance. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) d[0]![j] = j
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1)
    }
  return d[a.length]![b.length]!
}

// ---- search: words (all must match), "phrases", -exclusions, prefix, infix, typos

type Query = { words: string[]; phrases: string[][]; excluded: string[][] }
function parseQ(q: string): Query {
  const out: Query = { words: [], phrases: [], excluded: [] }
  for (const m of q.matchAll(/(-?)"([^"]*)"|(-?)(\S+)/g)) {
    const negated = (m[1] ?? m[3]) === '-'
    const words = tokens(m[2] ?? m[4]!)
    if (words.length === 0) continue
    if (negated) out.excluded.push(words)
    else if (m[2] !== undefined) out.phrases.push(words)
    else out.words.push(...words)
  }
  return out
}

const list = (v: string | undefined, n: number) => {
  const parts = (v ?? '').split(',')
  return Array.from({ length: n }, (_, k) => (parts.length === 1 ? parts[0]! : (parts[k] ?? '')))
}

function search(schema: Schema, docs: Map<string, Doc>, params: Record<string, unknown>) {
  const str = (k: string) => (params[k] === undefined ? undefined : String(params[k]))
  if (str('q') === undefined) fail(400, 'Parameter `q` is required.')
  const queryBy = (str('query_by') ?? '').split(',').filter(Boolean)
  if (queryBy.length === 0) fail(400, 'Parameter `query_by` is required.')
  const fields = queryBy.map((name) => {
    const f = schema.fields.find((x) => x.name === name)
    if (!f) fail(404, `Could not find a field named \`${name}\` in the schema.`)
    if (f!.type !== 'string' && f!.type !== 'string[]')
      fail(400, `Field \`${name}\` should be a string or a string array.`)
    if (f!.index === false) fail(400, `Field \`${name}\` is marked as a non-indexed field in the schema.`)
    return f!
  })
  const weights = list(str('query_by_weights') ?? String(fields.length), fields.length).map(Number)
  const prefixes = list(str('prefix') ?? 'true', fields.length).map((p) => p !== 'false')
  const infixes = list(str('infix') ?? 'off', fields.length)
  infixes.forEach((mode, k) => {
    if (!['off', 'always', 'fallback'].includes(mode)) fail(400, 'Invalid infix value.')
    if (mode !== 'off' && !fields[k]!.infix) fail(400, `Could not find \`${fields[k]!.name}\` in the infix index.`)
  })
  const numTypos = Number(str('num_typos') ?? 2)
  if (!(numTypos >= 0 && numTypos <= 2)) fail(400, 'Value of `num_typos` must be 0, 1 or 2.')
  const perPage = Number(str('per_page') ?? 10)
  if (!(Number.isInteger(perPage) && perPage >= 0 && perPage <= 250))
    fail(422, 'Only upto 250 hits can be fetched per page.')
  const filter = str('filter_by') ? parseFilter(str('filter_by')!, schema) : () => true
  const q = str('q')!
  const query = q === '*' ? null : parseQ(q)
  const last = query?.words.at(-1)

  const hits: { document: Doc; text_match: number }[] = []
  for (const doc of docs.values()) {
    if (!filter(doc)) continue
    if (!query) {
      hits.push({ document: doc, text_match: 100 })
      continue
    }
    const fieldTokens = fields.map((f) => [doc[f.name]].flat().flatMap((v) => tokens(String(v ?? ''))))
    const all = fieldTokens.flat()
    const hasRun = (ts: string[], run: string[]) => ts.some((_, k) => run.every((w, j) => ts[k + j] === w))
    if (query.excluded.some((run) => fieldTokens.some((ts) => hasRun(ts, run)))) continue
    if (!query.phrases.every((run) => fieldTokens.some((ts) => hasRun(ts, run)))) continue
    let score = query.phrases.length * 3
    let matched = true
    for (const [w, word] of query.words.entries()) {
      let best = 0
      fieldTokens.forEach((ts, k) => {
        const weight = weights[k] ?? 1
        for (const t of ts) {
          let s = 0
          if (t === word) s = 3
          else if (word === last && prefixes[k] && t.startsWith(word)) s = 2
          else if (w === 0 && infixes[k] === 'always' && t.includes(word)) s = 1
          else {
            const allowed = Math.min(numTypos, word.length >= 7 ? 2 : word.length >= 4 ? 1 : 0)
            if (allowed > 0 && distance(word, t) <= allowed) s = 1
          }
          best = Math.max(best, s * weight)
        }
      })
      if (best === 0) matched = false
      score += best
    }
    if (!matched || (query.words.length === 0 && query.phrases.length === 0 && all.length === 0)) continue
    if (query.words.length === 0 && query.phrases.length === 0) continue
    hits.push({ document: doc, text_match: score * 1_000_000 - all.length })
  }
  hits.sort((a, b) => b.text_match - a.text_match)
  return {
    facet_counts: [],
    found: hits.length,
    out_of: docs.size,
    page: 1,
    request_params: { collection_name: schema.name, per_page: perPage, q },
    search_time_ms: 0,
    hits: hits.slice(0, perPage).map((h) => ({ ...h, highlights: [] })),
  }
}

export async function startTypesenseFake(apiKey: string) {
  const collections = new Map<string, { schema: Schema; docs: Map<string, Doc> }>()
  const requests: Recorded[] = []
  const collectionOf = (name: string) => collections.get(name) ?? fail(404, 'Not Found')
  const keys = fakeKeyStore(apiKey, fail)

  /** The request's key checked for what the request does; a search gets each search's embedded parameters. */
  function authorize(key: string | null, method: string, path: string, query: Record<string, string>, body: string) {
    if (method === 'POST' && path === '/multi_search') {
      let searches: { collection?: unknown }[] = []
      try {
        searches = (JSON.parse(body) as { searches: { collection?: unknown }[] }).searches ?? []
      } catch {}
      const names = (Array.isArray(searches) ? searches : []).map((s) => String(s.collection ?? query.collection ?? ''))
      return keys.authorize(key, 'documents:search', names)
    }
    if (path === '/keys') return keys.authorize(key, method === 'POST' ? 'keys:create' : 'keys:list', [])
    if (key !== apiKey) fail(401, 'Forbidden - a valid `x-typesense-api-key` header must be sent.')
    return []
  }

  function importDocuments(name: string, query: Record<string, string>, body: string, contentType: string) {
    const { schema, docs } = collectionOf(name)
    if (!contentType.startsWith('text/plain') && !contentType.startsWith('application/octet-stream'))
      fail(400, 'Import expects a JSONL body (text/plain).')
    const action = query.action ?? 'create'
    if (!IMPORT_ACTIONS.has(action)) fail(400, 'The `action` parameter must be one of create, upsert, update, emplace.')
    const results = body
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        let doc: Doc
        try {
          doc = JSON.parse(line)
        } catch {
          return { success: false, error: 'Bad JSON.', document: line }
        }
        if (typeof doc.id !== 'string')
          return { success: false, error: 'Document `id` must be a string.', document: line }
        for (const f of schema.fields) {
          const v = doc[f.name]
          if (v === undefined || v === null) {
            if (!f.optional && f.index !== false)
              return {
                success: false,
                error: `Field \`${f.name}\` has been declared in the schema, but is not found in the document.`,
                document: line,
              }
          } else if (f.index !== false && !typeOk(f.type, v))
            return { success: false, error: `Field \`${f.name}\` must be a ${f.type}.`, document: line }
        }
        if (action === 'create' && docs.has(doc.id))
          return { success: false, error: 'A document with id already exists.', document: line }
        docs.set(doc.id, doc)
        return { success: true }
      })
    return results.map((r) => JSON.stringify(r)).join('\n')
  }

  function route(
    method: string,
    path: string,
    query: Record<string, string>,
    body: string,
    contentType: string,
    embedded: Record<string, unknown>[],
  ) {
    const one = /^\/collections\/([^/]+)$/.exec(path)
    const importing = /^\/collections\/([^/]+)\/documents\/import$/.exec(path)
    const documents = /^\/collections\/([^/]+)\/documents$/.exec(path)
    if (method === 'GET' && path === '/health') return { ok: true }
    if (method === 'POST' && path === '/keys') return keys.create(JSON.parse(body || 'null'))
    if (method === 'GET' && path === '/keys')
      return { keys: keys.keys.map(({ value, ...k }) => ({ ...k, value_prefix: value.slice(0, 4) })) }
    if (method === 'POST' && path === '/collections') {
      const schema = JSON.parse(body) as Schema
      if (typeof schema.name !== 'string' || !Array.isArray(schema.fields)) fail(400, 'Bad collection schema.')
      for (const f of schema.fields)
        if (typeof f.name !== 'string' || !TYPES.has(f.type)) fail(400, `Field \`${f.name}\` has an invalid data type.`)
      if (collections.has(schema.name)) fail(409, `A collection with name \`${schema.name}\` already exists.`)
      collections.set(schema.name, { schema, docs: new Map() })
      return { ...schema, num_documents: 0, created_at: 1 }
    }
    if (one) {
      const c = collectionOf(decodeURIComponent(one[1]!))
      if (method === 'GET') return { ...c.schema, num_documents: c.docs.size }
      if (method === 'DELETE') {
        collections.delete(c.schema.name)
        return c.schema
      }
    }
    if (importing && method === 'POST')
      return importDocuments(decodeURIComponent(importing[1]!), query, body, contentType)
    if (documents && method === 'DELETE') {
      const c = collectionOf(decodeURIComponent(documents[1]!))
      if (!query.filter_by) fail(400, 'Parameter `filter_by` must be provided.')
      const keep = parseFilter(query.filter_by!, c.schema)
      let n = 0
      for (const [id, doc] of c.docs)
        if (keep(doc)) {
          c.docs.delete(id)
          n++
        }
      return { num_deleted: n }
    }
    if (method === 'POST' && path === '/multi_search') {
      const { searches } = JSON.parse(body) as { searches: Record<string, unknown>[] }
      if (!Array.isArray(searches)) fail(400, 'Missing `searches` array.')
      return {
        results: searches.map((s, i) => {
          const params = keys.embed({ ...query, ...s }, embedded[i] ?? {})
          try {
            const c = collectionOf(String(params.collection))
            return search(c.schema, c.docs, params)
          } catch (err) {
            if (err instanceof ApiError) return { code: err.status, error: err.message }
            throw err
          }
        }),
      }
    }
    return fail(404, 'Not Found')
  }

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      const query = Object.fromEntries(url.searchParams)
      const body = await req.text()
      const contentType = req.headers.get('content-type') ?? ''
      let parsed: unknown = body
      try {
        parsed = body ? JSON.parse(body) : null
      } catch {}
      requests.push({ method: req.method, path: url.pathname, query, body: parsed })
      try {
        const embedded = authorize(req.headers.get('x-typesense-api-key'), req.method, url.pathname, query, body)
        const answer = route(req.method, url.pathname, query, body, contentType, embedded)
        if (typeof answer === 'string') return new Response(answer, { headers: { 'content-type': 'text/plain' } })
        const created = req.method === 'POST' && (url.pathname === '/collections' || url.pathname === '/keys')
        return Response.json(answer, { status: created ? 201 : 200 })
      } catch (err) {
        if (err instanceof ApiError) return Response.json({ message: err.message }, { status: err.status })
        return Response.json({ message: String(err) }, { status: 500 })
      }
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    collections,
    /** the API keys created through POST /keys, with their values */
    keys: keys.keys,
    stop: () => server.stop(true),
  }
}
