import { afterEach, describe, expect, it } from "vitest";
import { createJsonLogger } from "../../../src/adapters/json-logger.ts";
import { loadTelemetry, type Telemetry } from "../../../src/adapters/telemetry/load.ts";
import { parseTelemetryConfig } from "../../../src/app/telemetry-config.ts";
import { type OtlpReceiver, startOtlpReceiver } from "../../support/otlp-receiver.ts";

// The SDK adapter through its real exporter, into the loopback OTLP receiver: sampling and propagation
// as the W3C and the OTel specification say.

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;
const logged: string[] = [];
const logger = createJsonLogger("warn", (l) => logged.push(l));

let otlp: OtlpReceiver | null = null;
let telemetry: Telemetry | null = null;
afterEach(async () => {
  await telemetry?.shutdown();
  await otlp?.close();
  telemetry = null;
  otlp = null;
});

async function start(env: Record<string, string>) {
  otlp = await startOtlpReceiver();
  telemetry = await loadTelemetry(
    parseTelemetryConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_METRICS_EXPORTER: "none",
      ...env,
    }),
    logger,
    "test",
  );
  return telemetry!.tracing!;
}

const attemptFrom = (parent: string | null) => ({
  eventId: "evt_1",
  eventType: "message.delivered",
  endpointId: "ep_1",
  deliveryId: "d_1",
  attempt: 1,
  trigger: "automatic" as const,
  host: "receiver.example",
  parent,
});
const ended = {
  status: "succeeded" as const,
  responseStatus: 200,
  error: null,
  durationMs: 3,
  nextAttemptAt: null,
};

describe("the OpenTelemetry adapter", () => {
  it("loads nothing and answers null when the configuration is off", async () => {
    expect(await loadTelemetry(null, logger, "test")).toBeNull();
    expect(await loadTelemetry(parseTelemetryConfig({}), logger, "test")).toBeNull();
  });

  it("continues a valid publisher's trace, and starts a new one for an invalid traceparent", async () => {
    const tracing = await start({});
    const incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const p = tracing.publish("message.delivered", incoming);
    const f = p.fanOut("evt_1");
    expect(f.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
    f.end({ endpoints: 1, stored: true });
    p.end({ eventId: "evt_1", endpoints: 1, replayed: false });
    // All-zero trace id: invalid, so ignored (W3C Trace Context §3.2.2.3).
    const bad = tracing.publish(
      "message.delivered",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
    );
    const badFanOut = bad.fanOut("evt_2");
    expect(badFanOut.traceparent.split("-")[1]).not.toBe("00000000000000000000000000000000");
    badFanOut.end({ endpoints: 0, stored: true });
    bad.end({ eventId: "evt_2", endpoints: 0, replayed: false });
    await telemetry!.flush();
    const publishes = otlp!.spans.filter((s) => s.name === "herald publish");
    expect(publishes.map((s) => [s.traceId === "4bf92f3577b34da6a3ce929d0e0e4736", s.parentSpanId])).toEqual([
      [true, "00f067aa0ba902b7"],
      [false, ""],
    ]);
  });

  it("propagates an unsampled decision: traceparent flags 00, and nothing exported", async () => {
    const tracing = await start({ OTEL_TRACES_SAMPLER: "parentbased_always_off" });
    const root = tracing.attempt(attemptFrom(null));
    const [, rootTrace, , rootFlags] = root.traceparent.match(TRACEPARENT)!;
    expect(rootFlags).toBe("00");
    root.end(ended);
    // A sampled parent is followed (parent-based): exported, flags 01, the parent's trace.
    const sampledParent = `00-${"a".repeat(32)}-${"b".repeat(16)}-01`;
    const child = tracing.attempt(attemptFrom(sampledParent));
    expect(child.traceparent).toMatch(new RegExp(`^00-${"a".repeat(32)}-[0-9a-f]{16}-01$`));
    child.end(ended);
    await telemetry!.flush();
    expect(otlp!.spans.map((s) => [s.traceId, s.parentSpanId])).toEqual([["a".repeat(32), "b".repeat(16)]]);
    expect(rootTrace).not.toBe("a".repeat(32));
  });

  it("samples a ratio of new traces with traceidratio", async () => {
    const tracing = await start({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0" });
    const a = tracing.attempt(attemptFrom(null));
    expect(a.traceparent).toMatch(/-00$/);
    a.end(ended);
    await telemetry!.flush();
    expect(otlp!.spans).toEqual([]);
  });
});
