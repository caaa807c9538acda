import { and, eq, inArray, isNotNull, sql } from 'drizzle-orm'
import { db } from '../db/client'
import { listener } from '../db/listener'
import { prepared } from '../db/prepared'
import { products, resolutionRules } from '../db/schema'
import { logger } from '../shared/logger'
import { type CompiledRule, compileRule, Interner } from './conditions'

/**
 * A product as the resolver needs it: which organization holds it, which brand it is, and whether
 * the claim stands (`claimStatus` disputed or rejected: its links are withheld); its name describes
 * it in linksets (`itemDescription`).
 */
export type ProductRef = {
  id: string
  gtin: string
  name: string
  ownerId: string | null
  brandId: string | null
  claimStatus: string | null
  /** the recall in effect, if any (src/resolver/recall-links.ts); url null: the service's notice page */
  recalledAt: Date | null
  recallUrl: string | null
}

type ProductRules = { product: CompiledRule[]; batch: Map<string, CompiledRule[]>; serial: Map<string, CompiledRule[]> }

export const INDEX_CHANNEL = 'resolver_index'
const MAX_PRODUCTS = 500_000
/** How long a snapshot is trusted while the listener is down (changes may be missed then). */
const UNHEARD_TTL_MS = 1000

const byOrder = (a: CompiledRule, b: CompiledRule) => a.orderIndex - b.orderIndex || a.created - b.created

/** The columns of a ProductRef. */
const PRODUCT_REF = {
  id: products.id,
  gtin: products.gtin,
  name: products.productName,
  ownerId: products.ownerId,
  brandId: products.brandId,
  claimStatus: products.claimVerificationStatus,
  recalledAt: products.recalledAt,
  recallUrl: products.recallUrl,
}

const productByGtin = () =>
  prepared('resolver_product_by_gtin', (name) =>
    db
      .select(PRODUCT_REF)
      .from(products)
      .where(eq(products.gtin, sql.placeholder('gtin')))
      .prepare(name),
  )

/**
 * The enabled rules in memory, grouped by what they are attached to, so that resolving a scan
 * reads no table: products are looked up once and kept. Every process listens on one channel; the
 * `resolver-index` event consumer (outbox-driven) sends `rule:<id>` when a rule changes and
 * `product:<gtin>` when a product's owner or brand may have changed. While the listener is down
 * the index is reloaded at most once a second and products are read afresh.
 */
class RuleIndex {
  #byOrg = new Map<string, CompiledRule[]>()
  #byBrand = new Map<string, CompiledRule[]>()
  #byProduct = new Map<string, ProductRules>()
  #byId = new Map<string, CompiledRule>()
  #products = new Map<string, ProductRef | null>()
  #shared = new Interner()
  #listening = false
  #loadedAt = -Infinity
  #loading: Promise<void> | null = null
  /** rules changed while a full load ran: fetched again once it is in */
  #changedDuringLoad = new Set<string>()

  /** Subscribes to changes; the first resolve loads the rules. */
  listen() {
    return listener.on(INDEX_CHANNEL, {
      onMessage: (payload) => void this.#message(payload),
      onListening: (on) => {
        this.#listening = on
        this.#products.clear()
        this.#loadedAt = -Infinity // reload: messages may have been missed
      },
    })
  }

  async #message(payload: string) {
    const [kind, key] = [payload.slice(0, payload.indexOf(':')), payload.slice(payload.indexOf(':') + 1)]
    if (kind === 'product') this.#products.delete(key)
    else if (kind === 'rule') await this.reloadRule(key).catch((err) => logger.warn({ err }, 'rule reload failed'))
  }

  /** Loaded, and fresh enough when change messages cannot be heard. */
  isReady() {
    return this.#listening ? this.#loadedAt !== -Infinity : performance.now() - this.#loadedAt <= UNHEARD_TTL_MS
  }

  /** Loads the rules when they are not ready (isReady). */
  async ready() {
    if (!this.isReady()) await this.load()
  }

  load(): Promise<void> {
    this.#loading ??= (async () => {
      try {
        this.#changedDuringLoad.clear()
        const startedAt = performance.now()
        const rows = await db.select().from(resolutionRules).where(eq(resolutionRules.enabled, true))
        this.#byOrg.clear()
        this.#byBrand.clear()
        this.#byProduct.clear()
        this.#byId.clear()
        this.#shared.clear()
        for (const row of rows) this.#add(compileRule(row, this.#shared))
        this.#sortAll()
        await this.#preloadProducts()
        this.#loadedAt = startedAt
      } finally {
        this.#loading = null
      }
      for (const id of this.#changedDuringLoad) await this.reloadRule(id)
    })()
    return this.#loading
  }

  /** Applies one rule's current state (created, changed, disabled or deleted). */
  async reloadRule(id: string) {
    if (this.#loading) this.#changedDuringLoad.add(id)
    const [row] = await db.select().from(resolutionRules).where(eq(resolutionRules.id, id))
    this.#remove(id)
    if (row?.enabled) {
      const rule = compileRule(row, this.#shared)
      this.#add(rule)
      this.#listOf(rule).sort(byOrder)
    }
  }

  #listOf(rule: CompiledRule): CompiledRule[] {
    const get = <K>(map: Map<K, CompiledRule[]>, key: K) => {
      const list = map.get(key) ?? []
      if (list.length === 0) map.set(key, list)
      return list
    }
    switch (rule.scopeType) {
      case 'ORGANIZATION':
        return get(this.#byOrg, rule.organizationId)
      case 'BRAND':
        return get(this.#byBrand, rule.scopeId)
      default: {
        const entry = this.#byProduct.get(rule.productId!) ?? { product: [], batch: new Map(), serial: new Map() }
        this.#byProduct.set(rule.productId!, entry)
        if (rule.scopeType === 'PRODUCT') return entry.product
        return get(rule.scopeType === 'BATCH' ? entry.batch : entry.serial, rule.scopeId)
      }
    }
  }

  #add(rule: CompiledRule) {
    this.#byId.set(rule.id, rule)
    this.#listOf(rule).push(rule)
  }

  #remove(id: string) {
    const rule = this.#byId.get(id)
    if (!rule) return
    this.#byId.delete(id)
    const list = this.#listOf(rule)
    list.splice(list.indexOf(rule), 1)
  }

  #sortAll() {
    for (const list of this.#byOrg.values()) list.sort(byOrder)
    for (const list of this.#byBrand.values()) list.sort(byOrder)
    for (const entry of this.#byProduct.values()) {
      entry.product.sort(byOrder)
      for (const list of entry.batch.values()) list.sort(byOrder)
      for (const list of entry.serial.values()) list.sort(byOrder)
    }
  }

  /** The products that rules name, so that their first scans need no query either. */
  async #preloadProducts() {
    if (!this.#listening) return
    const rows = await db
      .select(PRODUCT_REF)
      .from(products)
      .where(
        inArray(
          products.id,
          db
            .selectDistinct({ id: resolutionRules.productId })
            .from(resolutionRules)
            .where(and(eq(resolutionRules.enabled, true), isNotNull(resolutionRules.productId))),
        ),
      )
      .limit(MAX_PRODUCTS)
    this.#products.clear()
    for (const row of rows) this.#products.set(row.gtin, this.#ref(row))
  }

  #ref(row: ProductRef): ProductRef {
    const shared = this.#shared
    return {
      id: shared.string(row.id),
      gtin: row.gtin,
      name: row.name,
      ownerId: shared.string(row.ownerId),
      brandId: shared.string(row.brandId),
      claimStatus: row.claimStatus,
      recalledAt: row.recalledAt,
      recallUrl: row.recallUrl,
    }
  }

  /** Drops a product this process has just changed, so that its next scan reads it afresh. */
  forgetProduct(gtin: string) {
    this.#products.delete(gtin)
  }

  /** The product of a GTIN-14 as kept (null: known to be none), or undefined when it must be read. */
  knownProduct(gtin: string): ProductRef | null | undefined {
    return this.#listening ? this.#products.get(gtin) : undefined
  }

  /** The catalog's product of a GTIN-14, or null; kept while change messages can be heard. */
  async product(gtin: string): Promise<ProductRef | null> {
    const known = this.knownProduct(gtin)
    if (known !== undefined) return known
    const [row] = await productByGtin().execute({ gtin })
    const ref = row ? this.#ref(row) : null
    if (this.#listening) {
      if (this.#products.size >= MAX_PRODUCTS) this.#products.clear()
      this.#products.set(gtin, ref)
    }
    return ref
  }

  /**
   * The rules that may apply to a scan, most specific scope first and, within a scope, by
   * `order_index`: the serial's, the lot's, the product's, its brand's, its owner's.
   */
  rulesFor(product: ProductRef, lot?: string, serial?: string): CompiledRule[] {
    const out: CompiledRule[] = []
    // rules of a product are its holder's: another organization's stay out when it changes hands
    const owner = product.ownerId
    const own = this.#byProduct.get(product.id)
    if (own) {
      if (serial !== undefined) pushHeld(out, own.serial.get(serial), owner)
      if (lot !== undefined) pushHeld(out, own.batch.get(lot), owner)
      pushHeld(out, own.product, owner)
    }
    const brand = product.brandId ? this.#byBrand.get(product.brandId) : undefined
    if (brand) for (const rule of brand) out.push(rule)
    if (owner) pushHeld(out, this.#byOrg.get(owner), owner)
    return out
  }

  get size() {
    return this.#byId.size
  }
}

/** Appends the rules of `list` that `owner` holds (a scan's hot path: no closure, no iterator). */
function pushHeld(out: CompiledRule[], list: CompiledRule[] | undefined, owner: string | null) {
  if (list === undefined) return
  for (let i = 0; i < list.length; i++) if (list[i]!.organizationId === owner) out.push(list[i]!)
}

export const ruleIndex = new RuleIndex()
