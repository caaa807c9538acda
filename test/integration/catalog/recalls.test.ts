import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createClient } from 'gtin-catalog'
import { parseId } from '../../../src/shared/ids'
import { verifyWebhookSignature } from '../../../src/webhooks/signature'
import {
  createKey,
  createOrganization,
  eventually,
  expectProblem,
  PRODUCTS,
  sql,
  type TestOrg,
  uniqueGtin,
} from '../../support/fixtures'
import { ownService } from '../../support/own-service'
import { startReceiver } from '../../support/receiver'
import { baseUrl, call, get, post } from '../../support/server'

// Recalls (issue 46): the owner's manager key recalls a product; the resource shows it, the event
// is stored with it, the resolver serves it ahead of every rule from the very next scan, and the
// service's own notice page stands in for a missing URL. Deliveries to a real receiver run on a
// service of their own in development mode (loopback http:// targets allowed).

const VOC = 'https://gs1.org/voc/'
const recallPath = (gtin: string) => `${PRODUCTS}/${gtin}/recall/`
const del = (path: string, key?: string) => call('DELETE', path, { key })

let org: TestOrg
beforeAll(async () => {
  org = await createOrganization()
})

async function product(owner: TestOrg, name = 'Recall Oat Bar') {
  const res = await post(PRODUCTS, { gtin: uniqueGtin(), product_name: name, brand: 'Recall Brand' }, owner.key)
  expect(res.status).toBe(201)
  return res.json as { id: string; gtin: string }
}

/** A PRODUCT rule of the owner: gs1:pip and default link to the brand's page. */
async function pipRule(owner: TestOrg, p: { id: string }) {
  const res = await post(
    `/resolver/api/v1/organizations/${owner.id}/resolution-rules`,
    { scope_type: 'PRODUCT', product_id: p.id, link_type: 'gs1:pip', custom_url: 'https://brand.example/oat-bar' },
    owner.key,
  )
  expect(res.status).toBe(201)
}

const stored = async (gtin: string) =>
  (
    await sql<{ recall_reason: string | null; recalled_at: Date | null; recall_url: string | null; by: string | null }>(
      'select recall_reason, recalled_at, recall_url, recalled_by::text as by from products where gtin = $1',
      [gtin],
    )
  )[0]!

const events = (p: { id: string }) =>
  sql<{ event_type: string; organization_id: string; data: any }>(
    'select event_type, organization_id::text, data from events where subject_id = $1 order by created, id',
    [parseId(p.id)],
  )

describe('recall a product', () => {
  test('the owner recalls: 200 with the recall on the resource, stored, attributed, product.recalled emitted', async () => {
    const p = await product(org)
    const body = {
      reason: 'Undeclared peanuts in lot L2405.',
      recalled_at: '2026-01-15T08:00:00+01:00',
      url: 'https://acme.example/recalls/oat-bar',
    }
    const res = await post(recallPath(p.gtin), body, org.key)
    expect(res.status).toBe(200)
    const recall = { reason: body.reason, recalled_at: '2026-01-15T07:00:00.000Z', url: body.url }
    expect(res.json).toMatchObject({ gtin: p.gtin, recall })
    expect((await get(`${PRODUCTS}/${p.gtin}`, org.key)).json.recall).toEqual(recall)
    const row = await stored(p.gtin)
    expect(row).toEqual({
      recall_reason: body.reason,
      recalled_at: new Date('2026-01-15T07:00:00Z'),
      recall_url: body.url,
      by: parseId(org.id),
    })
    const recalled = (await events(p)).filter((e) => e.event_type === 'product.recalled')
    expect(recalled).toHaveLength(1)
    expect(recalled[0]!.organization_id).toBe(parseId(org.id)!)
    expect(recalled[0]!.data.recall).toEqual(recall)
  })

  test('recalled_at defaults to now and url to none (the notice page)', async () => {
    const p = await product(org)
    const before = Date.now()
    const res = await post(recallPath(p.gtin), { reason: 'Glass fragments' }, org.key)
    expect(res.status).toBe(200)
    expect(res.json.recall).toMatchObject({ reason: 'Glass fragments', url: null })
    const at = Date.parse(res.json.recall.recalled_at)
    expect(at).toBeGreaterThanOrEqual(before - 1000)
    expect(at).toBeLessThanOrEqual(Date.now() + 1000)
    expect((await stored(p.gtin)).recall_url).toBeNull()
  })

  test('an editor key is 403, another organization 403, an unknown GTIN 404: nothing stored, no event', async () => {
    const p = await product(org)
    const editor = await createKey(org, 'editor')
    const other = await createOrganization()
    const body = { reason: 'Listeria' }
    expectProblem(await post(recallPath(p.gtin), body, editor), 403, 'forbidden')
    expectProblem(await post(recallPath(p.gtin), body, other.key), 403, 'forbidden')
    expectProblem(await del(recallPath(p.gtin), other.key), 403, 'forbidden')
    expectProblem(await post(recallPath(uniqueGtin()), body, org.key), 404, 'not_found')
    expectProblem(await post(recallPath(p.gtin), body), 401, 'unauthenticated')
    expect(await stored(p.gtin)).toEqual({ recall_reason: null, recalled_at: null, recall_url: null, by: null })
    expect((await events(p)).map((e) => e.event_type)).toEqual(['product.created'])
  })

  test('bad bodies are 422 naming the field, nothing stored', async () => {
    const p = await product(org)
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'reason'],
      [{ reason: '' }, 'reason'],
      [{ reason: '   ' }, 'reason'],
      [{ reason: 'x'.repeat(1001) }, 'reason'],
      [{ reason: 'ok', url: 'ftp://acme.example/recall' }, 'url'],
      [{ reason: 'ok', url: 'recalls/oat-bar' }, 'url'],
      [{ reason: 'ok', url: 'javascript:alert(1)' }, 'url'],
      [{ reason: 'ok', recalled_at: '2026-01-15' }, 'recalled_at'],
      [{ reason: 'ok', recalled_at: '2026-02-30T10:00:00Z' }, 'recalled_at'],
      [{ reason: 'ok', recalled_at: 'yesterday' }, 'recalled_at'],
      [{ reason: 'ok', recalled_at: new Date(Date.now() + 86_400_000).toISOString() }, 'recalled_at'],
      [{ reason: 'ok', severity: 'high' }, 'severity'],
    ]
    for (const [body, field] of cases) {
      const res = await post(recallPath(p.gtin), body, org.key)
      expect({ body, status: res.status, code: res.json?.code }).toEqual({
        body,
        status: 422,
        code: 'validation_error',
      })
      expect({ body, fields: res.json.errors?.map((e: { field: string }) => e.field) }).toEqual({
        body,
        fields: [field],
      })
    }
    // a reason of exactly 1000 characters (emoji count once) is fine
    expect((await post(recallPath(p.gtin), { reason: '🥜'.repeat(1000) }, org.key)).status).toBe(200)
    await del(recallPath(p.gtin), org.key)
    expect((await events(p)).map((e) => e.event_type)).toEqual([
      'product.created',
      'product.recalled',
      'product.updated',
    ])
  })

  test('the path is exactly as the contract writes it: without the slash, 308 to it', async () => {
    const p = await product(org)
    const res = await post(`${PRODUCTS}/${p.gtin}/recall`, { reason: 'x' }, org.key)
    expect(res.status).toBe(308)
    expect(res.headers.get('location')).toBe(recallPath(p.gtin))
    expect((await stored(p.gtin)).recall_reason).toBeNull()
  })
})

describe('the resolver serves the recall ahead of every rule', () => {
  test('with a URL: recallStatus and the default link go to it at once, other types to the rules, listed in the linkset', async () => {
    const p = await product(org)
    await pipRule(org, p)
    expect((await get(`/01/${p.gtin}`)).headers.get('location')).toBe('https://brand.example/oat-bar')
    const url = 'https://acme.example/recalls/oat-bar?lot=L2405'
    expect((await post(recallPath(p.gtin), { reason: 'Undeclared peanuts', url }, org.key)).status).toBe(200)
    // no waiting: the very next scan sees the recall
    const asked = await get(`/01/${p.gtin}?linkType=gs1:recallStatus`)
    expect(asked.status).toBe(307)
    expect(asked.headers.get('location')).toBe(url)
    const asUri = await get(`/01/${p.gtin}?linkType=${encodeURIComponent(`${VOC}recallStatus`)}`)
    expect(asUri.headers.get('location')).toBe(url)
    const plain = await get(`/01/${p.gtin}`)
    expect(plain.status).toBe(307)
    expect(plain.headers.get('location')).toBe(url)
    expect((await get(`/01/${p.gtin}?linkType=gs1:pip`)).headers.get('location')).toBe('https://brand.example/oat-bar')
    const linkset = await get(`/01/${p.gtin}?linkType=linkset`)
    expect(linkset.status).toBe(200)
    const set = linkset.json.linkset[0]
    expect(set[`${VOC}recallStatus`].map((l: { href: string }) => l.href)).toEqual([url])
    expect(set[`${VOC}defaultLink`].map((l: { href: string }) => l.href)).toEqual([url])
    expect(set[`${VOC}pip`].map((l: { href: string }) => l.href)).toEqual(['https://brand.example/oat-bar'])
  })

  test('without a URL: the service serves the notice page, every value escaped; ending the recall restores the rules', async () => {
    const p = await product(org, 'Oat <b>Bar</b>')
    await pipRule(org, p)
    const reason = '<script>alert("x")</script> & do not eat'
    expect((await post(recallPath(p.gtin), { reason }, org.key)).status).toBe(200)
    const notice = `${baseUrl}/products/recall/${p.gtin}`
    const asked = await get(`/01/${p.gtin}?linkType=gs1:recallStatus`)
    expect(asked.status).toBe(307)
    expect(asked.headers.get('location')).toBe(notice)
    const linkset = await get(`/01/${p.gtin}?linkType=linkset`)
    expect(linkset.json.linkset[0][`${VOC}recallStatus`][0].href).toBe(notice)

    const page = await get(`/products/recall/${p.gtin}`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'")
    expect(page.text).toContain('This product has been recalled')
    expect(page.text).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; do not eat')
    expect(page.text).toContain('Oat &lt;b&gt;Bar&lt;/b&gt;')
    expect(page.text).not.toContain('<script>')
    expect(page.text).not.toContain('<b>Bar')
    expect(page.text).toContain(p.gtin)

    // end it: 200 with recall null, stored, product.updated; the resolver is back to the rules at once
    const ended = await del(recallPath(p.gtin), org.key)
    expect(ended.status).toBe(200)
    expect(ended.json.recall).toBeNull()
    expect(await stored(p.gtin)).toEqual({ recall_reason: null, recalled_at: null, recall_url: null, by: null })
    const kinds = (await events(p)).map((e) => e.event_type)
    expect(kinds).toEqual(['product.created', 'product.recalled', 'product.updated'])
    expect((await events(p)).at(-1)!.data.recall).toBeNull()
    expect((await get(`/01/${p.gtin}`)).headers.get('location')).toBe('https://brand.example/oat-bar')
    expectProblem(await get(`/01/${p.gtin}?linkType=gs1:recallStatus`), 404, 'not_found')
    const linksetAfter = await get(`/01/${p.gtin}?linkType=linkset`)
    expect(linksetAfter.json.linkset[0][`${VOC}recallStatus`]).toBeUndefined()
    expectProblem(await get(`/products/recall/${p.gtin}`), 404, 'not_found')
    // ending again changes nothing and emits nothing
    expect((await del(recallPath(p.gtin), org.key)).status).toBe(200)
    expect((await events(p)).map((e) => e.event_type)).toEqual(kinds)
  })

  test('a recalled product with no rule at all still resolves to its recall', async () => {
    const p = await product(org)
    expectProblem(await get(`/01/${p.gtin}`), 404, 'not_found')
    await post(recallPath(p.gtin), { reason: 'Mislabelled allergen' }, org.key)
    const res = await get(`/01/${p.gtin}/10/L1`)
    expect(res.status).toBe(307)
    expect(res.headers.get('location')).toBe(`${baseUrl}/products/recall/${p.gtin}`)
  })
})

describe('the typed client', () => {
  test('recalls and ends a recall, typed, on the trailing-slash path itself (no redirect)', async () => {
    const p = await product(org)
    const requested: string[] = []
    const client = createClient(baseUrl, {
      apiKey: org.key,
      fetch: ((input: string | URL | Request, init?: RequestInit) => {
        requested.push(String(input instanceof Request ? input.url : input))
        return fetch(input, { ...init, redirect: 'manual' })
      }) as typeof fetch,
    })
    const recall = client.products.api.v1.products({ gtin: p.gtin }).recall
    const recalled = await recall.post({ reason: 'Undeclared sesame' })
    expect(recalled.status).toBe(200)
    expect(recalled.data!.recall!.reason).toBe('Undeclared sesame')
    const ended = await recall.delete()
    expect(ended.status).toBe(200)
    expect(ended.data!.recall).toBeNull()
    expect(requested.map((u) => new URL(u).pathname)).toEqual([recallPath(p.gtin), recallPath(p.gtin)])
    expect((await stored(p.gtin)).recall_reason).toBeNull()
  })
})

describe('the OpenAPI document', () => {
  test('names the recall operations and gives an example body', async () => {
    const doc = (await get('/docs/json')).json
    const item = doc.paths['/products/api/v1/products/{gtin}/recall/']
    expect(item.post.operationId).toBe('recallProduct')
    expect(item.delete.operationId).toBe('endRecall')
    expect(JSON.stringify(item.post.requestBody)).toContain('Undeclared peanuts')
    expect(Object.keys(item.post.responses)).toContain('200')
    expect(doc.paths['/products/recall/{gtin}'].get.responses['200'].content).toHaveProperty('text/html')
  })
})

describe('delivery to a webhook', () => {
  const service = ownService('recalls', { APP_ENV: 'development', NODE_ENV: 'development' })
  const receiver = startReceiver()
  beforeAll(() => service.start(), 120_000)
  afterAll(async () => {
    receiver.stop()
    await service.stop()
  })

  test('product.recalled and then product.updated reach a real receiver, signed', async () => {
    const owner = (
      await service.call('POST', '/account/api/v1/organizations', undefined, {
        name: 'Recall Hooks',
        owner_email: `o${Date.now()}@recalls.test`,
      })
    ).json
    const key = owner.api_key.key as string
    const hook = await service.call('POST', '/webhooks/api/v1/endpoints/', key, {
      url: `${receiver.url}/hook`,
      event_types: ['product.recalled', 'product.updated'],
    })
    expect(hook.status).toBe(201)
    const gtin = uniqueGtin()
    expect((await service.call('POST', PRODUCTS, key, { gtin, product_name: 'Hook Bar' })).status).toBe(201)
    const recalled = await service.call('POST', recallPath(gtin), key, { reason: 'Metal pieces' })
    expect(recalled.status).toBe(200)
    const [got] = await eventually(async () =>
      receiver.ofType('product.recalled').at(0) ? receiver.ofType('product.recalled') : null,
    )
    expect(got!.event).toMatchObject({
      event_type: 'product.recalled',
      organization_id: owner.organization.id,
      data: { gtin: recalled.json.gtin, recall: recalled.json.recall },
    })
    expect(got!.headers['x-service-event-type']).toBe('product.recalled')
    expect(verifyWebhookSignature(hook.json.signing_secret, got!.headers['x-service-signature']!, got!.body)).toBe(true)

    expect((await service.call('DELETE', recallPath(gtin), key)).status).toBe(200)
    const [update] = await eventually(async () =>
      receiver.ofType('product.updated').length ? receiver.ofType('product.updated') : null,
    )
    expect(update!.event.data).toMatchObject({ gtin: recalled.json.gtin, recall: null })
    expect(
      verifyWebhookSignature(hook.json.signing_secret, update!.headers['x-service-signature']!, update!.body),
    ).toBe(true)
    const stored = await service.query<{ status: string; event_type: string }>(
      `select d.status, e.event_type from webhook_deliveries d join events e on e.id = d.event_id
        where d.endpoint_id = (select id from webhook_endpoints where url = $1) order by e.created`,
      [`${receiver.url}/hook`],
    )
    expect(stored.map((s) => s.event_type)).toEqual(['product.recalled', 'product.updated'])
  }, 60_000)
})
