import { AsyncLocalStorage } from 'node:async_hooks'
import {
  type Context,
  type ContextManager,
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, ConsoleSpanExporter, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace'
import { config } from '../config'

/**
 * OpenTelemetry tracing: a span per request and per job, exported over OTLP/HTTP only when
 * configured (OTEL_TRACES_EXPORTER, or OTEL_EXPORTER_OTLP_ENDPOINT). A W3C `traceparent` a request
 * sends is continued whatever the export setting: without a tracer provider the API's spans are
 * non-recording but carry the caller's trace, so the jobs and webhook deliveries the request
 * causes carry the same trace id (stored with the event: src/events/outbox.ts).
 */

/**
 * The active context lives in an AsyncLocalStorage, as in @opentelemetry/context-async-hooks, with
 * one addition: `enter`. A request's span begins in an Elysia onRequest hook, which cannot wrap the
 * rest of the request in `context.with`; `enterWith` makes it the context of everything the
 * request does after the hook (each request is its own top-level call, so it never leaks to another).
 */
class RequestContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>()
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(ctx, () => fn.apply(thisArg, args))
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target
    const manager = this
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(ctx, () => (target as (...a: unknown[]) => unknown).apply(this, args))
    } as T
  }
  enter(ctx: Context) {
    this.#storage.enterWith(ctx)
  }
  enable() {
    return this
  }
  disable() {
    this.#storage.disable()
    return this
  }
}

const manager = new RequestContextManager()
context.setGlobalContextManager(manager)
propagation.setGlobalPropagator(new W3CTraceContextPropagator())

/** The exporter configured, or null when tracing is off (the default). */
function exporterOf(): SpanExporter | null {
  const kind = config.OTEL_TRACES_EXPORTER ?? (config.OTEL_EXPORTER_OTLP_ENDPOINT ? 'otlp' : 'none')
  if (kind === 'none') return null
  if (kind === 'console') return new ConsoleSpanExporter()
  const base = (config.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318').replace(/\/+$/, '')
  return new OTLPTraceExporter({ url: config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${base}/v1/traces` })
}

const exporter = exporterOf()
const provider = exporter
  ? new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': config.OTEL_SERVICE_NAME }),
      // spans leave within a second, in batches
      spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: 1000 })],
    })
  : null
if (provider) trace.setGlobalTracerProvider(provider)

/** Whether spans are recorded and exported (else only a received trace is carried on). */
export const tracingEnabled = provider !== null
const tracer = trace.getTracer('gtin-catalog')

/** Sends the spans still held (call before the process exits). */
export async function flushTraces() {
  await provider?.forceFlush().catch(() => {})
}

const headerGetter = {
  keys: (carrier: Headers) => {
    const names: string[] = []
    carrier.forEach((_, name) => {
      names.push(name)
    })
    return names
  },
  get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
}

/** The context a W3C traceparent (and tracestate) continues, or the root context. */
export function contextOf(traceparent: string | null | undefined): Context {
  if (!traceparent) return ROOT_CONTEXT
  return propagation.extract(ROOT_CONTEXT, { traceparent })
}

/** The active context as a W3C traceparent, or null when nothing is traced. */
export function currentTraceparent(ctx: Context = context.active()): string | null {
  if (!isSpanContextValid(trace.getSpanContext(ctx) ?? { traceId: '', spanId: '', traceFlags: 0 })) return null
  const carrier: Record<string, string> = {}
  propagation.inject(ctx, carrier)
  return carrier.traceparent ?? null
}

/** The trace id of the active context (for log lines), or undefined. */
export function activeTraceId(): string | undefined {
  const spanContext = trace.getSpanContext(context.active())
  return spanContext && isSpanContextValid(spanContext) ? spanContext.traceId : undefined
}

/** A request's span and the context it runs in. */
export type RequestTrace = { span: Span; context: Context }

/**
 * Begins a request's span, continuing the caller's `traceparent`, and makes it the active context
 * of the rest of the request. Nothing at all when tracing is off and the caller sent no traceparent.
 */
export function beginRequestSpan(request: Request, method: string, path: string): RequestTrace | null {
  if (!provider && !request.headers.has('traceparent')) return null
  const parent = propagation.extract(ROOT_CONTEXT, request.headers, headerGetter)
  const span = tracer.startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': path } },
    parent,
  )
  const ctx = trace.setSpan(parent, span)
  manager.enter(ctx)
  return { span, context: ctx }
}

/** The trace id of a request's span, when it has a valid one. */
export function traceIdOf(traced: RequestTrace | null | undefined): string | undefined {
  const spanContext = traced?.span.spanContext()
  return spanContext && isSpanContextValid(spanContext) ? spanContext.traceId : undefined
}

/** Re-enters a request's context (a request served again inside the app, src/http/idempotency.ts). */
export const enterRequestContext = (traced: RequestTrace) => manager.enter(traced.context)

/** Ends a request's span, named by its route template. */
export function endRequestSpan(traced: RequestTrace, method: string, route: string, status: number) {
  traced.span.updateName(`${method} ${route}`)
  traced.span.setAttributes({ 'http.route': route, 'http.response.status_code': status })
  if (status >= 500) traced.span.setStatus({ code: SpanStatusCode.ERROR })
  traced.span.end()
}

/** What a job carries of the trace that sent it. */
export type TraceCarrier = { traceparent?: string }

/**
 * Runs a batch of jobs with one span per job, each continuing the trace its job carries
 * (`data.traceparent`); the work runs in the first job's span's context, so what it sends on
 * (events, deliveries) continues that trace. A failure is recorded on every span.
 */
export async function withJobSpans<T>(queue: string, jobs: { id: string; data?: unknown }[], work: () => Promise<T>) {
  const traced = jobs.filter((job) => (job.data as TraceCarrier | undefined)?.traceparent)
  if (!provider && traced.length === 0) return work()
  const spans = jobs.map((job) =>
    tracer.startSpan(
      `job ${queue}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'messaging.system': 'pg-boss',
          'messaging.destination.name': queue,
          'messaging.message.id': job.id,
        },
      },
      contextOf((job.data as TraceCarrier | undefined)?.traceparent),
    ),
  )
  const lead = spans[Math.max(0, jobs.indexOf(traced[0]!))]!
  try {
    return await context.with(trace.setSpan(context.active(), lead), work)
  } catch (err) {
    for (const span of spans) {
      span.recordException(err as Error)
      span.setStatus({ code: SpanStatusCode.ERROR })
    }
    throw err
  } finally {
    for (const span of spans) span.end()
  }
}

/**
 * Runs an outgoing HTTP call in a client span continuing `traceparent` (a webhook delivery
 * continues the trace of the request that emitted its event); `headers` gains the span's own
 * traceparent. Without a traceparent and with tracing off it only runs the call.
 */
export async function withOutgoingSpan<T>(
  name: string,
  traceparent: string | null | undefined,
  headers: Record<string, string>,
  call: () => Promise<T>,
): Promise<T> {
  if (!provider && !traceparent) return call()
  const parent = contextOf(traceparent)
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT }, parent)
  const ctx = trace.setSpan(parent, span)
  propagation.inject(ctx, headers)
  try {
    return await context.with(ctx, call)
  } finally {
    span.end()
  }
}
