// OpenTelemetry export, loaded only when asked for (ADR 24): with no OTEL_* variable asking, nothing
// of the SDK is imported, no exporter exists, and the use cases and the engine hold `tracing: null`.
import type { Logger } from "../../app/logger.ts";
import type { FanOutMetrics } from "../../app/ports/events.ts";
import type { DeliveryMetrics } from "../../app/ports/sending.ts";
import type { Tracing } from "../../app/ports/tracing.ts";
import type { TelemetryConfig } from "../../app/telemetry-config.ts";

/** The gauges /metrics reads from the database, read again for each metrics export. */
export type Gauges = () => Promise<{ dueBacklog: number; oldestDueAgeSeconds: number; fifoHeld?: number }>;

export interface Telemetry {
  /** Spans of publishes and attempts; null when only metrics are exported. */
  tracing: Tracing | null;
  /** The metrics ports, reporting to OTLP as well as to what they wrap (unchanged when metrics are off). */
  metered(
    inner: { metrics: DeliveryMetrics; fanOut: FanOutMetrics },
    gauges: Gauges,
  ): { metrics: DeliveryMetrics; fanOut: FanOutMetrics };
  /** Exports what is waiting now. */
  flush(): Promise<void>;
  /** Exports what is waiting and stops the exporters. */
  shutdown(): Promise<void>;
}

/** Starts OpenTelemetry export as configured, or answers null (and loads nothing) when it is off. */
export async function loadTelemetry(
  config: TelemetryConfig | null | undefined,
  logger: Logger,
  version: string,
): Promise<Telemetry | null> {
  if (!config) return null;
  const { startTelemetry } = await import("./otel-sdk.ts");
  return startTelemetry(config, logger, version);
}
