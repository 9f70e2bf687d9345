import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createHeraldClient } from "../../clients/typescript/client.ts";
import type { HeraldProcess, Runtime, StartOptions } from "../support/herald-process.ts";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.ts";
import { behaviours, type Receiver, startReceiver } from "../support/receiver.ts";
import { createEndpoint, type DeliveryWorld, deliveryWorld, eventBody } from "./delivery-support.ts";

// A trace from a publish to the receiver's handler, through Herald's real OTLP exporters into a real
// OTLP/HTTP receiver on loopback (ADR 24): the publisher's traceparent is honoured, the publish, its
// fan-out and each attempt are spans of that trace, and the receiver gets the attempt's traceparent.

/** A publisher's trace: its id, the publisher's span and the traceparent it sends. */
function publisherTrace() {
  const traceId = randomBytes(16).toString("hex");
  const spanId = randomBytes(8).toString("hex");
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}
type PublisherTrace = ReturnType<typeof publisherTrace>;
const OTLP_SECRET = "otlp-credential-never-in-a-span";

/** What makes Herald export (everything else is the OTel default): fast batches, a header, a name. */
const otelEnv = (otlp: OtlpReceiver, protocol: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${OTLP_SECRET}`,
  OTEL_SERVICE_NAME: "herald-under-test",
  OTEL_BSP_SCHEDULE_DELAY: "100",
  OTEL_METRIC_EXPORT_INTERVAL: "300",
});

const TRUST: Record<Runtime, (ca: string) => Record<string, string>> = {
  node: (ca) => ({ NODE_EXTRA_CA_CERTS: ca }),
  bun: (ca) => ({ NODE_EXTRA_CA_CERTS: ca }),
  deno: (ca) => ({ DENO_CERT: ca }),
};

const parentOf = (traceparent: unknown) => String(traceparent).split("-")[2];
const traceOf = (traceparent: unknown) => String(traceparent).split("-")[1];

let world: DeliveryWorld;
beforeAll(async () => {
  world = await deliveryWorld("herald_otel");
});
afterAll(async () => {
  await world?.close();
});

// Processes share the file's database: one a failed test left running must not deliver the next test's events.
const running: HeraldProcess[] = [];
afterEach(async () => {
  await Promise.allSettled(running.splice(0).map((p) => p.stop(15_000)));
});
async function start(env: Record<string, string>, options?: Omit<StartOptions, "env">) {
  const p = await world.start(env, options);
  running.push(p);
  return p;
}

async function publish(baseUrl: string, token: string, body: unknown, traceparent?: string) {
  const r = await fetch(`${baseUrl}/api/v1/events`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      ...(traceparent ? { traceparent } : {}),
    },
    body: JSON.stringify(body),
  });
  expect(r.status).toBe(202);
  return ((await r.json()) as { id: string }).id;
}

/**
 * A project of its own with one endpoint (the test's receiver): each test's events go to its receiver
 * alone. Answers the token and the endpoint's id.
 */
async function project(baseUrl: string, receiver: Receiver) {
  const token = await world.newToken();
  const endpoint = await createEndpoint(createHeraldClient({ baseUrl, token }), receiver.url, [
    "message.delivered",
  ]);
  return { token, webhookId: endpoint.id };
}

const attemptsOf = (otlp: OtlpReceiver, t: PublisherTrace) =>
  otlp.spans.filter((s) => s.traceId === t.traceId && s.name === "herald attempt");

/** The spans of one event's trace, checked for the shape every runtime must give. */
function checkTrace(
  otlp: OtlpReceiver,
  t: PublisherTrace,
  seen: { eventId: string; webhookId: string; token: string },
  receiver: Receiver,
) {
  const { eventId, webhookId, token } = seen;
  const spans = otlp.spans.filter((s) => s.traceId === t.traceId);
  const named = (name: string) => spans.filter((s) => s.name === name);
  const [publishSpan] = named("herald publish");
  const [fanOut] = named("herald fan-out");
  expect(publishSpan).toMatchObject({
    parentSpanId: t.spanId,
    kind: 4,
    attributes: {
      "herald.event.type": "message.delivered",
      "herald.event.id": eventId,
      "herald.fanout.endpoints": 1,
      "herald.event.replayed": false,
    },
    resource: { "service.name": "herald-under-test" },
  });
  expect(fanOut).toMatchObject({
    parentSpanId: publishSpan!.spanId,
    attributes: { "herald.event.id": eventId, "herald.fanout.endpoints": 1, "herald.fanout.stored": true },
  });
  const attempts = named("herald attempt").sort(
    (a, b) =>
      Number(a.attributes["herald.delivery.attempt"]) - Number(b.attributes["herald.delivery.attempt"]),
  );
  // Every request the receiver got names an attempt span of the publisher's trace as its parent.
  const headers = receiver.requests.map((r) => r.headers.traceparent);
  expect(headers.map(traceOf)).toEqual(receiver.requests.map(() => t.traceId));
  expect(attempts.map((a) => a.spanId)).toEqual(headers.map(parentOf));
  for (const a of attempts) {
    expect(a.parentSpanId).toBe(fanOut!.spanId);
    expect(a.kind).toBe(3);
    expect(a.attributes).toMatchObject({
      "herald.endpoint.id": webhookId,
      "herald.event.id": eventId,
      "herald.event.type": "message.delivered",
      "http.request.method": "POST",
      "server.address": "127.0.0.1",
    });
    expect(typeof a.attributes["herald.delivery.duration_ms"]).toBe("number");
  }
  // Secrets never reach a span: no URL, no endpoint secret, no OTLP header, no token.
  const everything = JSON.stringify(spans);
  expect(everything).not.toContain(OTLP_SECRET);
  expect(everything).not.toContain(receiver.url);
  expect(everything).not.toContain(token);
  expect(everything).not.toContain("whsec_");
  return attempts;
}

const attemptFacts = (a: ReceivedSpan) => ({
  attempt: a.attributes["herald.delivery.attempt"],
  status: a.attributes["herald.delivery.status"],
  response: a.attributes["http.response.status_code"],
  error: a.attributes["herald.delivery.error"] ?? null,
  errorType: a.attributes["error.type"] ?? null,
  spanStatus: a.statusCode,
});

/**
 * A module hook for a Herald process that records every @opentelemetry/* import it resolves: start the
 * process with `nodeOptions` as NODE_OPTIONS, then `resolved()` is what it recorded, one a line.
 */
function importProbe(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const record = join(dir, "resolved.txt");
  writeFileSync(record, "");
  writeFileSync(
    join(dir, "hooks.mjs"),
    `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  if (specifier.includes("@opentelemetry/")) appendFileSync(${JSON.stringify(record)}, specifier + "\\n");
  return next(specifier, context);
}`,
  );
  writeFileSync(
    join(dir, "register.mjs"),
    `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(join(dir, "hooks.mjs")).href)});`,
  );
  return {
    nodeOptions: `--import ${pathToFileURL(join(dir, "register.mjs")).href}`,
    resolved: () => readFileSync(record, "utf8"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

describe("OpenTelemetry over OTLP/HTTP", () => {
  it("on Node (protobuf): an attempt retried by another process, after a restart, is in the publisher's trace", async () => {
    const otlp = await startOtlpReceiver();
    const receiver = await startReceiver({
      tls: world.tls,
      secrets: [],
      behaviour: (r) => (r.index === 0 ? behaviours.status(500, "not yet") : behaviours.status(200, "ok")),
    });
    try {
      // Long enough for the first process to be gone before its retry is due, whatever the machine's load.
      const env = { ...otelEnv(otlp, "http/protobuf"), HERALD_RETRY_SCHEDULE: "5s" };
      const t = publisherTrace();
      const first = await start({ ...env, OTEL_RESOURCE_ATTRIBUTES: "service.instance.id=first" });
      const { token, webhookId } = await project(first.baseUrl, receiver);
      const eventId = await publish(first.baseUrl, token, eventBody("message.delivered"), t.traceparent);
      await receiver.waitFor(1);
      // The first process stops before the retry is due: the second sends it, from the stored context.
      expect(await first.stop()).toBe(0);
      const second = await start({ ...env, OTEL_RESOURCE_ATTRIBUTES: "service.instance.id=second" });
      await receiver.waitFor(2);
      await otlp.waitFor((o) => attemptsOf(o, t).length === 2);
      await otlp.waitFor((o) =>
        ["herald.deliveries", "herald.delivery.duration", "herald.shards_owned", "herald.due_backlog"].every(
          (n) => o.metrics.some((m) => m.name === n),
        ),
      );
      const attempts = checkTrace(otlp, t, { eventId, webhookId, token }, receiver);
      expect(attempts.map(attemptFacts)).toEqual([
        {
          attempt: 1,
          status: "failed",
          response: 500,
          error: "http_status",
          errorType: "http_status",
          spanStatus: 2,
        },
        { attempt: 2, status: "succeeded", response: 200, error: null, errorType: null, spanStatus: 0 },
      ]);
      expect(attempts[0]!.attributes["herald.delivery.next_attempt_at"]).toEqual(expect.any(String));
      // The retry was the second process's, its parent read from the event as PostgreSQL stored it.
      expect(attempts.map((a) => a.resource["service.instance.id"])).toEqual(["first", "second"]);
      // Each process counted its attempt in herald.deliveries (cumulative: its latest export holds it).
      const counted = (instance: string, outcome: string, error: string) => {
        const exports = otlp.metrics.filter(
          (m) => m.name === "herald.deliveries" && m.resource["service.instance.id"] === instance,
        );
        const point = exports
          .at(-1)
          ?.points.find((p) => p.attributes.outcome === outcome && p.attributes.error === error);
        return point?.value ?? 0;
      };
      await otlp.waitFor(() => counted("second", "succeeded", "") === 1);
      expect(counted("first", "failed", "http_status")).toBe(1);
      expect(counted("first", "succeeded", "")).toBe(0);
      // The exports carried OTEL_EXPORTER_OTLP_HEADERS, and were protobuf.
      expect(new Set(otlp.exports.map((e) => `${e.contentType} ${e.headers.authorization}`))).toEqual(
        new Set([`application/x-protobuf Bearer ${OTLP_SECRET}`]),
      );
      expect(await second.stop()).toBe(0);
      expect(second.output()).not.toContain('"level":"error"');
    } finally {
      await receiver.close();
      await otlp.close();
    }
  });

  it.each([
    ["bun", "http/json"],
    ["deno", "http/protobuf"],
  ] as const)(
    "on %s (%s): publish, fan-out and attempt spans, the receiver in the same trace",
    async (runtime, protocol) => {
      const otlp = await startOtlpReceiver();
      const receiver = await startReceiver({
        tls: world.tls,
        secrets: [],
        behaviour: behaviours.status(204),
      });
      try {
        const herald = await start(
          { ...otelEnv(otlp, protocol), ...TRUST[runtime](world.tls.caCertPath) },
          { runtime },
        );
        const t = publisherTrace();
        const { token, webhookId } = await project(herald.baseUrl, receiver);
        const eventId = await publish(herald.baseUrl, token, eventBody("message.delivered"), t.traceparent);
        await receiver.waitFor(1);
        await otlp.waitFor((o) => attemptsOf(o, t).length === 1);
        // Its one attempt, counted by the OTLP metrics too (decoded from protobuf or JSON).
        await otlp.waitFor((o) =>
          o.metrics.some(
            (m) =>
              m.name === "herald.deliveries" &&
              m.points.some((p) => p.attributes.outcome === "succeeded" && p.value === 1),
          ),
        );
        const attempts = checkTrace(otlp, t, { eventId, webhookId, token }, receiver);
        expect(attempts.map(attemptFacts)).toEqual([
          { attempt: 1, status: "succeeded", response: 204, error: null, errorType: null, spanStatus: 0 },
        ]);
        expect(new Set(otlp.exports.map((e) => e.contentType))).toEqual(
          new Set([protocol === "http/json" ? "application/json" : "application/x-protobuf"]),
        );
        expect(await herald.stop()).toBe(0);
      } finally {
        await receiver.close();
        await otlp.close();
      }
    },
  );

  it("a batch makes a publish span per event under the request's traceparent; a replay and a refused publish say so", async () => {
    const otlp = await startOtlpReceiver();
    const receiver = await startReceiver({ tls: world.tls, secrets: [], behaviour: behaviours.status(200) });
    try {
      const herald = await start({ ...otelEnv(otlp, "http/protobuf"), OTEL_METRICS_EXPORTER: "none" });
      const { token } = await project(herald.baseUrl, receiver);
      const t = publisherTrace();
      const r = await fetch(`${herald.baseUrl}/api/v1/events/batch`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          traceparent: t.traceparent,
        },
        body: JSON.stringify({ events: [eventBody("message.delivered"), eventBody("message.delivered")] }),
      });
      expect(r.status).toBe(200);
      const ids = ((await r.json()) as { data: { event: { id: string } }[] }).data.map((d) => d.event.id);
      await receiver.waitFor(2);
      await otlp.waitFor((o) => attemptsOf(o, t).length === 2);
      const spans = otlp.spans.filter((s) => s.traceId === t.traceId);
      const publishes = spans.filter((s) => s.name === "herald publish");
      expect(publishes.map((p) => [p.parentSpanId, p.attributes["herald.event.id"]]).sort()).toEqual(
        ids.map((id) => [t.spanId, id]).sort(),
      );
      // Each event's attempt is under its own fan-out, under its own publish.
      for (const a of attemptsOf(otlp, t)) {
        const fanOut = spans.find((s) => s.spanId === a.parentSpanId)!;
        expect(fanOut.name).toBe("herald fan-out");
        const parent = spans.find((s) => s.spanId === fanOut.parentSpanId)!;
        expect(parent.attributes["herald.event.id"]).toBe(a.attributes["herald.event.id"]);
      }
      expect(receiver.requests.map((q) => traceOf(q.headers.traceparent))).toEqual([t.traceId, t.traceId]);

      // The same Idempotency-Key: the same body replays, another body is refused (409).
      const again = publisherTrace();
      const body = eventBody("message.delivered");
      const send = (b: unknown) =>
        fetch(`${herald.baseUrl}/api/v1/events`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
            "idempotency-key": "otel-replay",
            traceparent: again.traceparent,
          },
          body: JSON.stringify(b),
        });
      expect((await send(body)).status).toBe(202);
      expect((await send(body)).status).toBe(202);
      expect((await send(eventBody("message.delivered"))).status).toBe(409);
      await otlp.waitFor(
        (o) => o.spans.filter((s) => s.traceId === again.traceId && s.name === "herald publish").length === 3,
      );
      const three = otlp.spans.filter((s) => s.traceId === again.traceId && s.name === "herald publish");
      expect(
        three
          .map((s) => [
            s.attributes["herald.event.replayed"] ?? null,
            s.attributes["error.type"] ?? null,
            s.statusCode,
          ])
          .sort(),
      ).toEqual(
        [
          [false, null, 0],
          [true, null, 0],
          [null, "conflict", 2],
        ].sort(),
      );
      // Only the first of the three stored anything: one fan-out in that trace.
      await receiver.waitFor(3);
      expect(await herald.stop()).toBe(0);
      expect(
        otlp.spans.filter((s) => s.traceId === again.traceId && s.name === "herald fan-out"),
      ).toHaveLength(1);
    } finally {
      await receiver.close();
      await otlp.close();
    }
  });

  it("on Deno, warns at start that OTEL_DENO=true adds Deno's own traceparent to deliveries", async () => {
    const herald = await start(
      { OTEL_DENO: "true", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" },
      { runtime: "deno" },
    );
    expect(await herald.stop()).toBe(0);
    expect(herald.output()).toContain("OTEL_DENO=true: Deno adds its own traceparent to every delivery");
  });

  it("with no OTEL_* variable: the SDK is never loaded, nothing is exported, and no traceparent is sent", async () => {
    const probe = importProbe("herald-otel-off-");
    const receiver = await startReceiver({ tls: world.tls, secrets: [], behaviour: behaviours.status(200) });
    try {
      const herald = await start({ NODE_OPTIONS: probe.nodeOptions });
      const { token } = await project(herald.baseUrl, receiver);
      await publish(herald.baseUrl, token, eventBody("message.delivered"), publisherTrace().traceparent);
      const [request] = await receiver.waitFor(1);
      expect(request!.headers.traceparent).toBeUndefined();
      expect(await herald.stop()).toBe(0);
      expect(probe.resolved()).toBe("");
    } finally {
      await receiver.close();
      probe.remove();
    }
  });

  it("the probe of the test above sees the SDK when telemetry is on (so its silence means something)", async () => {
    const probe = importProbe("herald-otel-on-");
    const otlp = await startOtlpReceiver();
    try {
      const herald = await start({
        ...otelEnv(otlp, "http/protobuf"),
        OTEL_METRICS_EXPORTER: "none",
        NODE_OPTIONS: probe.nodeOptions,
      });
      expect(await herald.stop()).toBe(0);
      expect(probe.resolved()).toContain("@opentelemetry/sdk-trace-base");
      // Metrics were switched off by OTEL_METRICS_EXPORTER=none: nothing came to /v1/metrics.
      expect(otlp.exports.filter((e) => e.path === "/v1/metrics")).toEqual([]);
    } finally {
      await otlp.close();
      probe.remove();
    }
  });
});
