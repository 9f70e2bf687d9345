// The OpenTelemetry SDK behind the Tracing port and the metrics ports (ADR 24): the providers and
// exporters the configuration asks for, and their shutdown. Imported only by load.ts, dynamically, when an
// OTEL_* variable asks for an export: with telemetry off none of this is loaded. No global provider and
// no context manager are registered (otel-tracing.ts passes parents explicitly).
import { type DiagLogger, DiagLogLevel, diag } from "@opentelemetry/api";
import { OTLPMetricExporter as JsonMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as ProtoMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import type { Logger } from "../../app/logger.ts";
import type { Tracing } from "../../app/ports/tracing.ts";
import type { TelemetryConfig } from "../../app/telemetry-config.ts";
import { meteredWith } from "./otel-metrics.ts";
import { sampler, tracingWith } from "./otel-tracing.ts";
import type { Telemetry } from "./telemetry.ts";

const SHUTDOWN_LIMIT_MS = 5_000;

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
