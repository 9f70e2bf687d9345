// What the loader answers and the SDK adapter builds: the Telemetry handle the entry point holds, and
// the gauges it is given. Types only, so that load.ts (which must load nothing of the SDK) and
// otel-sdk.ts both import them from here and never each other (ADR 24).
import type { FanOutMetrics } from "../../app/ports/events.ts";
import type { DeliveryMetrics } from "../../app/ports/sending.ts";
import type { Tracing } from "../../app/ports/tracing.ts";

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
