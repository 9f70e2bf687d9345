// The OpenTelemetry SDK behind the Tracing port and the metrics ports (ADR 24). Imported only by
// load.ts, dynamically, when an OTEL_* variable asks for an export: with telemetry off none of this is
// loaded. No global provider and no context manager are registered: parents are passed explicitly (the
// publisher's traceparent, the one stored with the event), which works the same on Node, Bun and Deno.
import {
  type Attributes,
  type Context,
  type DiagLogger,
  DiagLogLevel,
  defaultTextMapGetter,
  diag,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPMetricExporter as JsonMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as ProtoMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
} from "@opentelemetry/semantic-conventions";
import type { Logger } from "../../app/logger.ts";
import type { FanOutMetrics } from "../../app/ports/events.ts";
import type { DeliveryMetrics } from "../../app/ports/sending.ts";
import type { AttemptSpan, AttemptStart, FanOutSpan, PublishSpan, Tracing } from "../../app/ports/tracing.ts";
import type { SamplerName, TelemetryConfig } from "../../app/telemetry-config.ts";
import type { Gauges, Telemetry } from "./load.ts";

const propagator = new W3CTraceContextPropagator();

/**
 * The W3C traceparent of a span (also of a non-recording one: an unsampled trace is still propagated,
 * with flags 00). Written directly: the propagator's inject costs a context and a carrier per attempt.
 */
function traceparentOf(span: Span): string {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-0${c.traceFlags & 1}`;
}

/** The context a traceparent names, or the root when it is absent or not a valid one. */
function parentContext(traceparent: string | null | undefined): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
}

/** A refused or failed publish: its domain error's kind (`validation_failed`, `conflict`, ...), or `internal`. */
function failed(span: Span, error: unknown): void {
  const kind = error instanceof Error ? (error as { kind?: unknown }).kind : undefined;
  span.setAttribute(ATTR_ERROR_TYPE, typeof kind === "string" ? kind : "internal");
  span.setStatus({ code: SpanStatusCode.ERROR });
}

function sampler(name: SamplerName, ratio: number): Sampler {
  switch (name) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(ratio);
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

function tracingWith(tracer: Tracer): Tracing {
  return {
    publish(eventType, incoming): PublishSpan {
      const span = tracer.startSpan(
        "herald publish",
        { kind: SpanKind.PRODUCER, attributes: { "herald.event.type": eventType } },
        parentContext(incoming),
      );
      const ctx = trace.setSpan(ROOT_CONTEXT, span);
      return {
        fanOut(eventId): FanOutSpan {
          const child = tracer.startSpan(
            "herald fan-out",
            {
              kind: SpanKind.INTERNAL,
              attributes: { "herald.event.id": eventId, "herald.event.type": eventType },
            },
            ctx,
          );
          return {
            traceparent: traceparentOf(child),
            end(outcome) {
              if ("error" in outcome) failed(child, outcome.error);
              else
                child.setAttributes({
                  "herald.fanout.endpoints": outcome.endpoints,
                  "herald.fanout.stored": outcome.stored,
                });
              child.end();
            },
          };
        },
        end(outcome) {
          if ("error" in outcome) failed(span, outcome.error);
          else
            span.setAttributes({
              "herald.event.id": outcome.eventId,
              "herald.fanout.endpoints": outcome.endpoints,
              "herald.event.replayed": outcome.replayed,
            });
          span.end();
        },
      };
    },

    attempt(s: AttemptStart): AttemptSpan {
      const attributes: Attributes = {
        "herald.endpoint.id": s.endpointId,
        "herald.event.id": s.eventId,
        "herald.event.type": s.eventType,
        "herald.delivery.id": s.deliveryId,
        "herald.delivery.attempt": s.attempt,
        "herald.delivery.trigger": s.trigger,
        [ATTR_HTTP_REQUEST_METHOD]: "POST",
        [ATTR_SERVER_ADDRESS]: s.host,
      };
      const span = tracer.startSpan(
        "herald attempt",
        { kind: SpanKind.CLIENT, attributes },
        parentContext(s.parent),
      );
      return {
        traceparent: traceparentOf(span),
        end(r) {
          span.setAttribute("herald.delivery.status", r.status);
          if (r.responseStatus !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, r.responseStatus);
          if (r.durationMs !== null) span.setAttribute("herald.delivery.duration_ms", r.durationMs);
          if (r.nextAttemptAt !== null)
            span.setAttribute("herald.delivery.next_attempt_at", r.nextAttemptAt.toISOString());
          if (r.error !== null) {
            span.setAttribute("herald.delivery.error", r.error);
            span.setAttribute(ATTR_ERROR_TYPE, r.error);
          }
          if (r.status !== "succeeded")
            span.setStatus({ code: SpanStatusCode.ERROR, message: r.error ?? r.status });
          span.end();
        },
      };
    },
  };
}

const SHUTDOWN_LIMIT_MS = 5_000;
const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Every call goes to /metrics (Prometheus) and to the OTLP instruments alike. */
function meteredWith(
  provider: MeterProvider,
  inner: { metrics: DeliveryMetrics; fanOut: FanOutMetrics },
  gauges: Gauges,
  version: string,
): { metrics: DeliveryMetrics; fanOut: FanOutMetrics } {
  const meter = provider.getMeter("herald", version);
  const deliveries = meter.createCounter("herald.deliveries", {
    description: "Delivery attempts recorded, by outcome and error code.",
  });
  const duration = meter.createHistogram("herald.delivery.duration", {
    description: "Time one delivery attempt took.",
    unit: "s",
    advice: { explicitBucketBoundaries: SECONDS_BUCKETS },
  });
  const publishToAttempt = meter.createHistogram("herald.publish_to_attempt", {
    description: "Time from accepting an event to its first attempt finishing.",
    unit: "s",
    advice: { explicitBucketBoundaries: SECONDS_BUCKETS },
  });
  const leaseRecoveries = meter.createCounter("herald.lease_recoveries", {
    description: "Endpoint shards taken over after their owner's lease expired (it died or stalled).",
  });
  const disabled = meter.createCounter("herald.endpoints_disabled", {
    description: "Endpoints disabled by the delivery engine, by reason.",
  });
  const filtered = meter.createCounter("herald.events_filtered", {
    description:
      "Events not delivered to a subscribed endpoint because its filter did not match, by event type.",
  });
  let owned = 0;
  meter
    .createObservableGauge("herald.shards_owned", {
      description: "Endpoint shards this process owns now (of 256).",
    })
    .addCallback((r) => r.observe(owned));
  const backlog = meter.createObservableGauge("herald.due_backlog", {
    description: "Pending deliveries that are due now.",
  });
  const oldest = meter.createObservableGauge("herald.oldest_due_age", {
    description: "How long the oldest due delivery has waited.",
    unit: "s",
  });
  const fifoHeld = meter.createObservableGauge("herald.fifo_held", {
    description: "Deliveries held back by ordering: pending behind the head of a FIFO endpoint.",
  });
  meter.addBatchObservableCallback(
    async (r) => {
      // A database that does not answer leaves these out of this export, as /metrics does.
      const g = await gauges().catch(() => null);
      if (g === null) return;
      r.observe(backlog, g.dueBacklog);
      r.observe(oldest, g.oldestDueAgeSeconds);
      if (g.fifoHeld !== undefined) r.observe(fifoHeld, g.fifoHeld);
    },
    [backlog, oldest, fifoHeld],
  );
  const m = inner.metrics;
  return {
    metrics: {
      attempt(o) {
        m.attempt(o);
        deliveries.add(1, { outcome: o.status, error: o.error ?? "" });
        if (o.durationMs !== null) duration.record(o.durationMs / 1000);
      },
      leaseRecovered(count) {
        m.leaseRecovered(count);
        leaseRecoveries.add(count);
      },
      shardsOwned(count) {
        m.shardsOwned(count);
        owned = count;
      },
      endpointDisabled(reason) {
        m.endpointDisabled(reason);
        disabled.add(1, { reason });
      },
      publishToAttempt(ms) {
        m.publishToAttempt(ms);
        publishToAttempt.record(ms / 1000);
      },
    },
    fanOut: {
      eventsFiltered(type, endpoints) {
        inner.fanOut.eventsFiltered(type, endpoints);
        filtered.add(endpoints, { type });
      },
    },
  };
}

/** Exporter failures go to Herald's log, once per message, as warnings; never a header or a URL. */
function diagnostics(logger: Logger): DiagLogger {
  const seen = new Set<string>();
  const warn = (message: string) => {
    if (seen.has(message) || seen.size > 100) return;
    seen.add(message);
    logger.warn("OpenTelemetry export problem", { detail: message.slice(0, 200) });
  };
  const ignore = () => {};
  return { error: warn, warn, info: ignore, debug: ignore, verbose: ignore };
}

/** Starts the providers and exporters the configuration asks for. */
export function startTelemetry(config: TelemetryConfig, logger: Logger, version: string): Telemetry {
  diag.setLogger(diagnostics(logger), { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  const resource = defaultResource().merge(
    resourceFromAttributes({
      ...config.resource,
      [ATTR_SERVICE_NAME]: config.serviceName,
      [ATTR_SERVICE_VERSION]: version,
    }),
  );
  let tracerProvider: BasicTracerProvider | null = null;
  let tracing: Tracing | null = null;
  if (config.traces) {
    const t = config.traces;
    const options = { url: t.url, headers: t.headers, timeoutMillis: t.timeoutMs };
    const exporter =
      t.protocol === "http/json" ? new JsonTraceExporter(options) : new ProtoTraceExporter(options);
    tracerProvider = new BasicTracerProvider({
      resource,
      sampler: sampler(t.sampler, t.ratio),
      spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: t.batchDelayMs })],
    });
    tracing = tracingWith(tracerProvider.getTracer("herald", version));
  }
  let meterProvider: MeterProvider | null = null;
  if (config.metrics) {
    const m = config.metrics;
    const options = { url: m.url, headers: m.headers, timeoutMillis: m.timeoutMs };
    const exporter =
      m.protocol === "http/json" ? new JsonMetricExporter(options) : new ProtoMetricExporter(options);
    meterProvider = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter,
          exportIntervalMillis: m.intervalMs,
          exportTimeoutMillis: Math.min(m.timeoutMs, m.intervalMs),
        }),
      ],
    });
  }
  const mp = meterProvider;
  return {
    tracing,
    metered: (inner, gauges) => (mp === null ? inner : meteredWith(mp, inner, gauges, version)),
    async flush() {
      await Promise.all([tracerProvider?.forceFlush(), meterProvider?.forceFlush()]);
    },
    async shutdown() {
      // A collector that does not answer holds a stop up for at most SHUTDOWN_LIMIT_MS.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.allSettled([tracerProvider?.shutdown(), meterProvider?.shutdown()]),
        new Promise((resolve) => {
          timer = setTimeout(resolve, SHUTDOWN_LIMIT_MS);
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
