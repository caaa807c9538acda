// TypeBox's own kinds: Elysia's t.Integer also accepts numeric strings, so Convert would leave text
import { availableParallelism } from 'node:os'
import { Type as t } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

/** Every environment variable the service reads, parsed once at boot (contract §1). */
const Env = t.Object({
  DATABASE_URL: t.Optional(t.String({ minLength: 1 })),
  PORT: t.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: t.String({ default: '0.0.0.0' }),
  DATA_DIR: t.String({ default: './.data' }),
  /**
   * The embedded cluster (no DATABASE_URL) writes each commit to disk before answering (`on`);
   * `off` for throwaway clusters such as the test runs': nothing is lost when a process is killed,
   * only when the machine itself crashes.
   */
  EMBEDDED_POSTGRES_FSYNC: t.Union([t.Literal('on'), t.Literal('off')], { default: 'on' }),
  /**
   * More settings for the embedded cluster, `name=value` pairs separated by spaces, each passed as
   * `-c name=value` (e.g. `shared_preload_libraries=pg_stat_statements work_mem=64MB` to see where
   * a benchmark's statements spend their time). They win over the cluster's postgresql.conf, where
   * the service sizes shared_buffers and max_wal_size when it creates the cluster
   * (src/db/embedded-sizing.ts). The service's own settings (address, port, socket, fsync,
   * connections) cannot be changed here. A setting PostgreSQL refuses stops the start, with its own
   * error in the log.
   */
  EMBEDDED_POSTGRES_SETTINGS: t.String({ default: '', pattern: '^\\s*([a-z_.]+=\\S+(\\s+|$))*$' }),
  /**
   * Where finished batch exports are kept: `postgres` (chunked in the database, so api and worker
   * processes on different hosts share nothing else) or `directory` (files in BATCH_DIR, which
   * they must then share).
   */
  BATCH_STORE: t.Union([t.Literal('postgres'), t.Literal('directory')], { default: 'postgres' }),
  /** Where batch exports are rendered (and, with BATCH_STORE=directory, kept) (default DATA_DIR/batches). */
  BATCH_DIR: t.Optional(t.String({ minLength: 1 })),
  /** Hours a finished batch export stays downloadable before its file is removed. */
  BATCH_RETENTION_HOURS: t.Number({ minimum: 0.01, maximum: 24 * 90, default: 24 }),
  /** Batches an organization may have queued or running at once, and start per hour. */
  BATCH_CONCURRENT_LIMIT: t.Integer({ minimum: 1, maximum: 100, default: 2 }),
  BATCH_HOURLY_LIMIT: t.Integer({ minimum: 1, maximum: 10_000, default: 20 }),
  ROLE: t.Union([t.Literal('all'), t.Literal('api'), t.Literal('worker')], { default: 'all' }),
  ADMIN_TOKEN: t.Optional(t.String({ minLength: 16 })),
  /** unset: X-Forwarded-For is ignored; a hop count (`true` = 1) or a list of proxy addresses/CIDRs */
  TRUST_PROXY: t.Optional(t.String()),
  /**
   * The service's public origin (`https://id.example.com`), used for the resolver's links and
   * linkset anchors instead of anything a request says. Unset: behind TRUST_PROXY the proxy's
   * X-Forwarded-Proto and X-Forwarded-Host (or Host), else the address the server listens on.
   */
  PUBLIC_URL: t.Optional(
    t.String({
      pattern: '^https?://([A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?/?$',
    }),
  ),
  /** Anonymous catalog searches one address may make per minute (spec: 60). */
  SEARCH_ANONYMOUS_PER_MINUTE: t.Integer({ minimum: 1, maximum: 1_000_000, default: 60 }),
  /** Anonymous Digital Link resolutions one address may make per minute (keyed callers are not limited). */
  RESOLVER_ANONYMOUS_PER_MINUTE: t.Integer({ minimum: 1, maximum: 1_000_000, default: 60 }),
  /** Request headers a proxy or CDN sets with the caller's place, read by resolution rules' location conditions. */
  GEO_COUNTRY_HEADER: t.String({ default: 'cf-ipcountry' }),
  GEO_REGION_HEADER: t.String({ default: 'cf-region-code' }),
  GEO_CITY_HEADER: t.String({ default: 'cf-ipcity' }),
  /** Set: search answers from Typesense at this URL (e.g. http://localhost:8108), kept in step by events. */
  TYPESENSE_URL: t.Optional(t.String({ pattern: '^https?://[^\\s]+$' })),
  TYPESENSE_API_KEY: t.Optional(t.String({ minLength: 1 })),
  /**
   * Set: the service mints scoped search keys. A secret (never given out) from which each
   * collection's parent key is derived; the service creates those parents in Typesense with
   * TYPESENSE_API_KEY, each allowed `documents:search` on its one collection.
   */
  TYPESENSE_SEARCH_API_KEY: t.Optional(t.String({ minLength: 1 })),
  /** Typesense's address as browsers reach it, when it differs from TYPESENSE_URL (given out with scoped keys). */
  TYPESENSE_PUBLIC_URL: t.Optional(t.String({ pattern: '^https?://[^\\s]+$' })),
  /** Seconds to wait before each retry of a failed webhook delivery (then it is failed); jittered ±10 %. */
  WEBHOOK_RETRY_SCHEDULE: t.String({
    pattern: '^[0-9]+(\\.[0-9]+)?(,[0-9]+(\\.[0-9]+)?){0,19}$',
    default: '30,120,600,3600,14400,43200,86400',
  }),
  /** Seconds a webhook receiver has to answer. */
  WEBHOOK_TIMEOUT_SECONDS: t.Number({ minimum: 0.1, maximum: 60, default: 10 }),
  /** Deliveries one worker process has in flight at once, and one endpoint across all processes. */
  WEBHOOK_MAX_IN_FLIGHT: t.Integer({ minimum: 1, maximum: 1000, default: 200 }),
  WEBHOOK_ENDPOINT_CONCURRENCY: t.Integer({ minimum: 1, maximum: 100, default: 10 }),
  /**
   * Deliveries one organization has in flight at once across all processes, so one tenant's slow
   * receivers cannot take every slot (default: a quarter of WEBHOOK_MAX_IN_FLIGHT).
   */
  WEBHOOK_ORGANIZATION_CONCURRENCY: t.Optional(t.Integer({ minimum: 1, maximum: 1000 })),
  /** Consecutive failed attempts (errors, timeouts, non-2xx) that open an endpoint's circuit breaker. */
  WEBHOOK_CIRCUIT_FAILURES: t.Integer({ minimum: 1, maximum: 1000, default: 5 }),
  /**
   * Seconds an open circuit holds an endpoint's deliveries back before one probe attempt (default:
   * the first step of WEBHOOK_RETRY_SCHEDULE, 30 s, as long as a first retry waits).
   */
  WEBHOOK_CIRCUIT_OPEN_SECONDS: t.Optional(t.Number({ minimum: 0.1, maximum: 24 * 3600 })),
  /**
   * Seconds between a worker's checks that the delivery schedule (an unlogged table) survived
   * PostgreSQL: a crash recovery or a failover empties it while the workers keep running.
   */
  WEBHOOK_SCHEDULE_CHECK_SECONDS: t.Number({ minimum: 0.1, maximum: 3600, default: 10 }),
  /** Hours an endpoint may fail every delivery before it is switched off (5 days). */
  WEBHOOK_DISABLE_AFTER_HOURS: t.Number({ minimum: 0.01, maximum: 24 * 365, default: 120 }),
  LOG_LEVEL: t.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => t.Literal(l)),
    { default: 'info' },
  ),
  /**
   * Tracing export (OpenTelemetry's own variable names): `otlp` (OTLP over HTTP, JSON), `console` or
   * `none`; unset: `otlp` when OTEL_EXPORTER_OTLP_ENDPOINT is set, else `none`. A received
   * traceparent is carried into jobs and webhook deliveries either way.
   */
  OTEL_TRACES_EXPORTER: t.Optional(t.Union([t.Literal('otlp'), t.Literal('console'), t.Literal('none')])),
  /** The collector's base URL (spans go to <it>/v1/traces); the _TRACES_ one is the traces URL itself. */
  OTEL_EXPORTER_OTLP_ENDPOINT: t.Optional(t.String({ pattern: '^https?://[^\\s]+$' })),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: t.Optional(t.String({ pattern: '^https?://[^\\s]+$' })),
  OTEL_SERVICE_NAME: t.String({ minLength: 1, default: 'gtin-catalog' }),
  /**
   * A bearer token for GET /metrics (Authorization: Bearer <it>); the admin token also reads it.
   * With neither set, /metrics answers 404.
   */
  METRICS_TOKEN: t.Optional(t.String({ minLength: 16 })),
  /** Where log lines go: stdout for servers; the CLI sends them to stderr to keep stdout for output. */
  LOG_TARGET: t.Union([t.Literal('stdout'), t.Literal('stderr')], { default: 'stdout' }),
  NODE_ENV: t.Optional(t.String()),
  APP_ENV: t.Optional(t.String()),
  /** Seconds a verified API key stays in the in-process cache (revocation clears it at once). */
  KEY_CACHE_TTL: t.Integer({ minimum: 0, maximum: 3600, default: 60 }),
  DB_POOL_SIZE: t.Integer({ minimum: 1, maximum: 200, default: 16 }),
  /**
   * Connections of the search statements' own pool (default: twice the CPUs, the classic size for
   * CPU-bound queries; more connections than the database's CPUs can run only add switching, and
   * queue requests inside PostgreSQL instead of in the pool).
   */
  SEARCH_POOL_SIZE: t.Integer({ minimum: 1, maximum: 200, default: Math.max(2, 2 * availableParallelism()) }),
  /**
   * Transactions the search drain (`search.documents`) runs at once to rebuild marked documents after a
   * bulk write (default: the CPUs, as the work is PostgreSQL's CPU: text search parsing and indexes).
   */
  SEARCH_DRAIN_CONCURRENCY: t.Integer({ minimum: 1, maximum: 32, default: Math.max(1, availableParallelism()) }),
  /**
   * How many products a running import may leave unsearchable before the drain builds their
   * documents beside it (src/search/marks.ts): more makes the import faster (the documents are
   * built after it, not on its cores) and the wait after it longer, about two minutes per million
   * documents of real Open Food Facts labels on two cores.
   */
  SEARCH_BULK_MAX_PENDING: t.Integer({ minimum: 0, maximum: 100_000_000, default: 700_000 }),
  /** Server-side feed files a run may name by path live under this folder (default DATA_DIR/feeds). */
  FEED_DIR: t.Optional(t.String({ minLength: 1 })),
  /** A JSON file of scheduled imports (cron + path or URL), synced to pg-boss schedules when a worker starts. */
  FEED_SCHEDULE_FILE: t.Optional(t.String({ minLength: 1 })),
  /** Longest a scheduled feed download may take, and its largest size. */
  FEED_DOWNLOAD_TIMEOUT_SECONDS: t.Number({ minimum: 1, maximum: 24 * 3600, default: 3600 }),
  FEED_DOWNLOAD_MAX_MB: t.Integer({ minimum: 1, maximum: 1_048_576, default: 51_200 }),
  /** Largest feed file an upload (POST /feeds/api/v1/runs) may send, in MiB (413 past it; nothing is stored). */
  FEED_UPLOAD_MAX_MB: t.Integer({ minimum: 1, maximum: 16_384, default: 512 }),
  /**
   * Largest size a gzip-compressed uploaded feed may decompress to, in MiB: the run fails past it.
   * Any gzip feed also fails past 100:1 once over 4 MiB (a decompression bomb).
   */
  FEED_DECOMPRESSED_MAX_MB: t.Integer({ minimum: 1, maximum: 1_048_576, default: 4096 }),
  /** Uploads (feeds, performance imports, barcode CSVs) one process receives at once (503 past it; 2 per organization). */
  UPLOAD_CONCURRENCY: t.Integer({ minimum: 1, maximum: 1000, default: 8 }),
  /** Longest an upload may take to arrive, in seconds (408 after; a pause of 10 s is 408 at once). */
  UPLOAD_TIMEOUT_SECONDS: t.Integer({ minimum: 1, maximum: 24 * 3600, default: 900 }),
  /** Seconds between pg-boss's passes over the schedules (a due job is sent within about this long). */
  SCHEDULE_INTERVAL_SECONDS: t.Integer({ minimum: 1, maximum: 45, default: 30 }),
  /**
   * Records per feed chunk job (2500: a chunk takes longer than pg-boss's half-second poll, so a
   * worker never waits out the poll between chunks; 1000-row chunks left it idle a third of the time).
   */
  FEED_CHUNK_ROWS: t.Integer({ minimum: 10, maximum: 20_000, default: 2500 }),
  /**
   * Chunk jobs one worker process runs at once (default: the CPUs and one more, 4 at most). A chunk's
   * transaction spends a third of its time waiting on this process (deciding values, analysing
   * ingredients, building statements): with one more transaction than cores, the database's cores
   * are not left idle meanwhile (200,000 rows on two cores: 16.8-20.9 s with 3, 21-25 s with 2, 17.8 s
   * with 4; fetching two chunks a time in pg-boss's burst mode made no difference). Past 4 the process's one JavaScript thread is the limit, and each takes a connection of
   * DB_POOL_SIZE that requests would wait for.
   */
  FEED_CHUNK_CONCURRENCY: t.Integer({ minimum: 1, maximum: 32, default: Math.min(availableParallelism() + 1, 4) }),
  /**
   * Chunk jobs of one runner (an organization, or the platform) written at once across all worker
   * processes (default FEED_CHUNK_CONCURRENCY: a run alone goes at full speed, and fairness comes
   * from the chunks' priorities, every run's chunk n before any run's n+1; set it lower to keep
   * slots free for other runners at all times, at the cost of each runner's speed).
   */
  FEED_CHUNKS_PER_ORGANIZATION: t.Optional(t.Integer({ minimum: 1, maximum: 1000 })),
  /** Feed files one worker process reads (splits into chunks) at once; one runner reads one at a time. */
  FEED_IMPORT_CONCURRENCY: t.Integer({ minimum: 1, maximum: 32, default: 2 }),
  /**
   * Feed runs one organization may have queued or running (429 for the next, before its body is
   * read); the platform's runs (admin token, CLI, schedules) are not counted.
   */
  FEED_RUNS_PER_ORGANIZATION: t.Integer({ minimum: 1, maximum: 1000, default: 4 }),
  /** Aggregate confidence a non-owner value needs before it becomes a product's canonical value. */
  PROMOTION_THRESHOLD: t.Number({ minimum: 0, maximum: 1, default: 0.6 }),
  /** Performance rows written per transaction by an import (its progress moves chunk by chunk). */
  PERFORMANCE_CHUNK_ROWS: t.Integer({ minimum: 100, maximum: 200_000, default: 20_000 }),
  /** Performance imports one worker process writes at once. */
  PERFORMANCE_IMPORT_CONCURRENCY: t.Integer({ minimum: 1, maximum: 32, default: 2 }),
  /** The platform's cut of a retailer's gross ad revenue, a decimal string 0-1 (at most 4 decimals). */
  PLATFORM_FEE_RATE: t.String({ pattern: '^(0(\\.[0-9]{1,4})?|1(\\.0{1,4})?)$', default: '0.2' }),
  /**
   * The platform's own organization (shortuuid or UUID): its keys read every retailer's revenue
   * shares under its own id, and its managers move them (as the admin token does).
   */
  PLATFORM_ORGANIZATION_ID: t.Optional(
    t.String({
      pattern:
        '^([23456789A-HJ-NP-Za-km-z]{22}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$',
    }),
  ),
})

export type Config = typeof Env.static & { environment: 'development' | 'production' | 'test' }

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw = Object.fromEntries(Object.entries(env).filter(([k, v]) => k in Env.properties && v !== ''))
  const converted = Value.Convert(Env, Value.Default(Env, raw))
  if (!Value.Check(Env, converted)) {
    const problems = [...Value.Errors(Env, converted)].map((e) => `${e.path.slice(1)}: ${e.message}`)
    throw new Error(`invalid environment: ${problems.join('; ')}`)
  }
  const parsed = converted as typeof Env.static
  if (parsed.TYPESENSE_URL && !parsed.TYPESENSE_API_KEY)
    throw new Error('invalid environment: TYPESENSE_API_KEY: required when TYPESENSE_URL is set')
  const name = (parsed.APP_ENV ?? parsed.NODE_ENV ?? 'development').toLowerCase()
  const environment = name === 'production' ? 'production' : name === 'test' ? 'test' : 'development'
  return { ...parsed, environment }
}

export const config: Readonly<Config> = Object.freeze(loadConfig())
