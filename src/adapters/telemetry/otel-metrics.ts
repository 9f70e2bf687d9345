// The metrics ports on the OpenTelemetry SDK (ADR 24): each call still goes to what it wraps (/metrics,
// Prometheus) and to an OTLP instrument; the database gauges are read again for each export.
import type { MeterProvider } from "@opentelemetry/sdk-metrics";
import type { FanOutMetrics } from "../../app/ports/events.ts";
import type { DeliveryMetrics } from "../../app/ports/sending.ts";
import type { Gauges } from "./telemetry.ts";

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Every call goes to /metrics (Prometheus) and to the OTLP instruments alike. */
export function meteredWith(
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
