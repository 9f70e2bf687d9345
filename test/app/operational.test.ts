import { describe, expect, it } from "vitest";
import type { EventUseCases, PublishInput } from "../../src/app/events.ts";
import { silentLogger } from "../../src/app/logger.ts";
import { operationalEvents } from "../../src/app/operational.ts";
import type { Envelope } from "../../src/domain/envelope.ts";
import { DomainError } from "../../src/domain/errors.ts";
import { failingNotice, type OperationalNotice } from "../../src/domain/operational.ts";
import { SCOPE, type Script, sampleMessage, scriptedSender } from "../support/engine-harness.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { type Harness, setup as startedHarness } from "./engine/engine-suite.ts";

const BROKEN = "https://broken.example.com/hooks";
const OPS = "https://ops.example.com/alerts";
const HOUR = 3_600_000;

async function setup(script: Script, failingAfterMs = HOUR) {
  return startedHarness({ sender: scriptedSender(script), failingAfterMs });
}

/** The envelopes posted to a URL, in the order sent. */
const postedTo = (t: Harness, url: string): Envelope[] =>
  t.sender.requests.filter((r) => r.url === url).map((r) => JSON.parse(r.body) as Envelope);
/** The distinct operational events posted to a URL (a failed one is posted again by its retries). */
const operationalTo = (t: Harness, url: string) => [
  ...new Map(
    postedTo(t, url)
      .filter((e) => e.type.startsWith("endpoint.") || e.type === "delivery.exhausted")
      .map((e) => [e.id, e]),
  ).values(),
];

/** Drains until `check` holds: the endpoint.disabled of a disable is published in the background. */
async function drainUntil(t: Harness, check: () => boolean) {
  const deadline = Date.now() + PATIENCE_MS;
  for (;;) {
    await t.drain();
    if (check()) return;
    if (Date.now() > deadline) throw new Error("what was awaited did not happen");
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** An endpoint that fails at everything (with `status`), subscribed to message.sent and every operational type. */
async function brokenAndOps(t: Harness) {
  const { endpoint: broken } = await t.endpoints.create(SCOPE, {
    url: BROKEN,
    events: [
      "message.sent",
      "endpoint.disabled",
      "endpoint.failing",
      "endpoint.recovered",
      "delivery.exhausted",
    ],
  });
  const { endpoint: ops } = await t.endpoints.create(SCOPE, {
    url: OPS,
    events: ["endpoint.disabled", "endpoint.failing", "endpoint.recovered", "delivery.exhausted"],
  });
  return { broken, ops };
}

/** BROKEN answering 500 while `state.fail` holds, and the operations endpoint; `sent()` publishes a message.sent. */
async function brokenWhileFailing() {
  const state = { fail: true };
  const t = await setup((req) =>
    req.url === BROKEN && state.fail ? { ok: false, responseStatus: 500 } : { ok: true },
  );
  const { broken } = await brokenAndOps(t);
  const sent = () => t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
  return { t, broken, sent, state };
}

describe("operational events", () => {
  it("a 410 disables the endpoint: endpoint.disabled (gone) and delivery.exhausted go to the operations endpoint, never to the endpoint itself", async () => {
    const t = await setup((req) => (req.url === BROKEN ? { ok: false, responseStatus: 410 } : { ok: true }));
    const { broken, ops } = await brokenAndOps(t);
    const published = await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await drainUntil(t, () => operationalTo(t, OPS).length === 2);

    const byType = Object.fromEntries(operationalTo(t, OPS).map((e) => [e.type, e]));
    expect(byType["endpoint.disabled"]).toMatchObject({
      resource_id: broken.id,
      tenant_id: SCOPE.tenantId,
      project_id: SCOPE.projectId,
      data: { endpoint_id: broken.id, url: BROKEN, disabled_reason: "gone" },
    });
    const [first] = await t.history(broken.id);
    expect(byType["delivery.exhausted"]).toMatchObject({
      resource_id: broken.id,
      data: {
        endpoint_id: broken.id,
        event_id: published.envelope.id,
        event_type: "message.sent",
        delivery_id: first!.id,
        attempt: 1,
        response_status: 410,
        error: "http_status",
      },
    });
    // Recorded like any delivery to the operations endpoint, and the endpoint is marked reported.
    expect((await t.history(ops.id)).map((d) => [d.eventType, d.status]).sort()).toEqual([
      ["delivery.exhausted", "succeeded"],
      ["endpoint.disabled", "succeeded"],
    ]);
    const off = await t.endpoints.get(SCOPE, broken.id);
    expect(off.disabledNotice).toEqual(off.disabledAt);
    // The broken endpoint was subscribed to all four; none about itself was made for it.
    expect(postedTo(t, BROKEN).map((e) => e.type)).toEqual(["message.sent"]);
    expect((await t.history(broken.id)).map((d) => d.eventType)).toEqual(["message.sent"]);
    // The job finds nothing more owed, however often it runs.
    t.clock.advance(60_000);
    expect(await t.jobs.reportOperational()).toBe(0);
    await t.drain();
    expect(operationalTo(t, OPS)).toHaveLength(2);
  });

  it("many deliveries given up together: one delivery.exhausted each, every one delivered", async () => {
    const t = await setup((req) => (req.url === BROKEN ? { ok: false, responseStatus: 503 } : { ok: true }));
    const { broken } = await brokenAndOps(t);
    const n = 150; // more than one batch publish holds (MAX_BATCH_EVENTS)
    for (let i = 0; i < n; i++)
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    t.clock.advance(5_000);
    await t.drain();
    t.clock.advance(30_000);
    await drainUntil(t, () => operationalTo(t, OPS).length >= n);
    const given = (await t.repos.deliveries.list(SCOPE, broken.id, {}, { limit: 500, cursor: null })).data
      .filter((d) => d.attempt === 3)
      .map((d) => d.id)
      .sort();
    expect(given).toHaveLength(n);
    const exhausted = operationalTo(t, OPS);
    expect(exhausted.every((e) => e.type === "delivery.exhausted")).toBe(true);
    expect(exhausted.map((e) => e.data.delivery_id as string).sort()).toEqual(given);
  });

  it("delivery.exhausted follows the last automatic attempt only, and never a manual one", async () => {
    const t = await setup((req) => (req.url === BROKEN ? { ok: false, responseStatus: 503 } : { ok: true }));
    const { broken } = await brokenAndOps(t);
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    t.clock.advance(5_000);
    await t.drain();
    expect(operationalTo(t, OPS)).toEqual([]);
    t.clock.advance(30_000);
    await t.drain();
    const history = await t.history(broken.id);
    expect(history.map((d) => d.status)).toEqual(["failed", "failed", "failed"]);
    expect(operationalTo(t, OPS).map((e) => [e.type, e.data.attempt, e.data.delivery_id])).toEqual([
      ["delivery.exhausted", 3, history[2]!.id],
    ]);
    await t.deliveries.retry(SCOPE, history[2]!.id);
    await t.drain();
    expect((await t.history(broken.id)).map((d) => [d.trigger, d.status]).at(-1)).toEqual([
      "manual",
      "failed",
    ]);
    expect(operationalTo(t, OPS)).toHaveLength(1);
  });

  it("endpoint.failing once per streak after HERALD_FAILING_AFTER, endpoint.recovered at its first success; a short streak reports nothing", async () => {
    const { t, broken, sent, state } = await brokenWhileFailing();

    // A short streak: failing then succeeding within the hour says nothing.
    await sent();
    await t.drain();
    state.fail = false;
    t.clock.advance(5_000);
    await t.drain();
    expect((await t.endpoints.get(SCOPE, broken.id)).failingSince).toBeNull();
    expect(operationalTo(t, OPS)).toEqual([]);

    state.fail = true;
    await sent();
    await t.drain();
    const since = (await t.endpoints.get(SCOPE, broken.id)).failingSince!;
    t.clock.advance(HOUR - 1);
    expect(await t.jobs.reportOperational()).toBe(0);
    t.clock.advance(1);
    // Three processes run the job at once: one event.
    const others = [0, 1].map(() =>
      operationalEvents({
        repos: t.repos,
        clock: t.clock,
        events: t.events,
        logger: silentLogger,
        failingAfterMs: HOUR,
      }),
    );
    const counts = await Promise.all([t.jobs.reportOperational(), ...others.map((o) => o.reportOwed())]);
    expect(counts.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    await t.drain();
    expect(operationalTo(t, OPS).map((e) => [e.type, e.data.failing_since])).toEqual([
      ["endpoint.failing", since.toISOString()],
    ]);
    // Later runs of the job in the same streak publish nothing.
    t.clock.advance(HOUR);
    expect(await t.jobs.reportOperational()).toBe(0);

    state.fail = false;
    t.clock.advance(30_000);
    await sent();
    await t.drain();
    expect(operationalTo(t, OPS).map((e) => [e.type, e.data.failing_since])).toEqual([
      ["endpoint.failing", since.toISOString()],
      ["endpoint.recovered", since.toISOString()],
    ]);
    expect(postedTo(t, BROKEN).every((e) => e.type === "message.sent")).toBe(true);
  });

  describe("a streak that ends while the job reports it still gets its endpoint.recovered", () => {
    /** BROKEN failing for an hour, its streak not reported yet; `recover()` makes its next attempt succeed. */
    async function anHourFailing() {
      const { t, broken, sent, state } = await brokenWhileFailing();
      await sent();
      await t.drain();
      const since = (await t.endpoints.get(SCOPE, broken.id)).failingSince!;
      t.clock.advance(HOUR);
      const recover = async () => {
        state.fail = false;
        await sent();
        await t.drain();
      };
      return { t, broken, since, recover };
    }
    const reported = (t: Harness) =>
      operationalTo(t, OPS)
        .map((e) => [e.type, e.data.failing_since])
        .sort();

    it("the success lands between the job's endpoint.failing and its mark: the job sends endpoint.recovered", async () => {
      const { t, broken, since, recover } = await anHourFailing();
      const markReported = t.repos.endpoints.markReported.bind(t.repos.endpoints);
      t.repos.endpoints.markReported = async (id, kind, at) => {
        // The streak ends (the recorder reads it unreported: it owes nothing) before the mark is written.
        if (id === broken.id) await recover();
        return markReported(id, kind, at);
      };
      expect(await t.jobs.reportOperational()).toBe(1);
      t.repos.endpoints.markReported = markReported;
      await drainUntil(t, () => operationalTo(t, OPS).length === 2);
      expect(reported(t)).toEqual([
        ["endpoint.failing", since.toISOString()],
        ["endpoint.recovered", since.toISOString()],
      ]);
      expect((await t.endpoints.get(SCOPE, broken.id)).failingSince).toBeNull();
    });

    it("the job dies between its endpoint.failing and its mark, then the streak ends: the recorder sends endpoint.recovered", async () => {
      const { t, broken, since, recover } = await anHourFailing();
      // The dying job's publish, never marked.
      const owed = failingNotice(await t.endpoints.get(SCOPE, broken.id), t.clock.now(), HOUR)!;
      await t.operational.publish(owed);
      await recover();
      await drainUntil(t, () => operationalTo(t, OPS).length === 2);
      expect(reported(t)).toEqual([
        ["endpoint.failing", since.toISOString()],
        ["endpoint.recovered", since.toISOString()],
      ]);
      expect(await t.jobs.reportOperational()).toBe(0);
    });

    it("a streak old enough to report that ends before any job reported it owes nothing", async () => {
      const { t, broken, recover } = await anHourFailing();
      await recover();
      expect((await t.endpoints.get(SCOPE, broken.id)).failingSince).toBeNull();
      expect(await t.jobs.reportOperational()).toBe(0);
      await t.drain();
      expect(operationalTo(t, OPS)).toEqual([]);
    });

    it("the job's mark lands between the recorder's read and its clear: the recorder sends endpoint.recovered", async () => {
      const { t, since, recover } = await anHourFailing();
      const record = t.repos.deliveries.record.bind(t.repos.deliveries);
      let job: Promise<number> | null = null;
      t.repos.deliveries.record = async (results) => {
        // The success's results: the recorder has read the streak unreported; the job reports it now.
        job ??= t.jobs.reportOperational();
        await job;
        return record(results);
      };
      await recover();
      t.repos.deliveries.record = record;
      expect(await job).toBe(1);
      await drainUntil(t, () => operationalTo(t, OPS).length === 2);
      expect(reported(t)).toEqual([
        ["endpoint.failing", since.toISOString()],
        ["endpoint.recovered", since.toISOString()],
      ]);
    });
  });

  it("a crash between publishing and marking publishes nothing twice: the occurrence's key replays the first", async () => {
    const t = await setup((req) =>
      req.url.startsWith("https://broken.") ? { ok: false, responseStatus: 500 } : { ok: true },
    );
    const { broken } = await brokenAndOps(t);
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    t.clock.advance(HOUR);
    // The dying process published, then died before marking the streak reported.
    const owed = failingNotice(await t.endpoints.get(SCOPE, broken.id), t.clock.now(), HOUR)!;
    await t.operational.publish(owed);
    // Meanwhile its URL was edited: the retry's data differ, and still finds the first publish.
    await t.endpoints.update(SCOPE, broken.id, { url: "https://broken.example.com/v2" });
    expect(await t.jobs.reportOperational()).toBe(1);
    await t.drain();
    expect(operationalTo(t, OPS).map((e) => e.type)).toEqual(["endpoint.failing"]);
    expect((await t.endpoints.get(SCOPE, broken.id)).failingNotice).not.toBeNull();
  });

  it("no loop: an operations endpoint that fails makes no stream about itself, and its given-up deliveries owe nothing", async () => {
    // Every operational delivery fails; the other endpoint answers 410 to be disabled.
    const t = await setup((req) =>
      req.url === OPS ? { ok: false, responseStatus: 500 } : { ok: false, responseStatus: 410 },
    );
    const { broken, ops } = await brokenAndOps(t);
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await drainUntil(t, () => operationalTo(t, OPS).length === 2);
    // Its two deliveries fail through the whole schedule: each given up, neither owes a delivery.exhausted.
    t.clock.advance(5_000);
    await t.drain();
    t.clock.advance(30_000);
    await t.drain();
    const toOps = await t.history(ops.id);
    expect(toOps.map((d) => d.status)).toEqual(["failed", "failed", "failed", "failed", "failed", "failed"]);
    // Its streak, hours long, is made by operational deliveries alone: no endpoint.failing about it.
    t.clock.advance(5 * HOUR);
    expect(await t.jobs.reportOperational()).toBe(0);
    await t.drain();
    expect(operationalTo(t, OPS)).toHaveLength(2);
    expect(operationalTo(t, BROKEN)).toEqual([]);
    // Disabling it by hand is reported once, to the project's other subscriber (the broken one, disabled: skipped).
    await t.endpoints.update(SCOPE, ops.id, { enabled: false });
    await drainUntil(
      t,
      () =>
        (t.repos.endpoints as unknown as { rows: Map<string, { disabledNotice: Date | null }> }).rows.get(
          ops.id,
        )?.disabledNotice !== null,
    );
    const toBroken = await t.history(broken.id);
    expect(toBroken.map((d) => [d.eventType, d.status]).sort()).toEqual([
      ["endpoint.disabled", "skipped"],
      ["message.sent", "failed"],
    ]);
    expect(await t.jobs.reportOperational()).toBe(0);
  });

  it("refuses an operational type from a publisher with a 422 naming `type`", async () => {
    const t = await setup(() => ({ ok: true }));
    const attempt = t.events.publish(SCOPE, {
      type: "endpoint.disabled",
      data: {
        endpoint_id: crypto.randomUUID(),
        url: OPS,
        disabled_reason: "manual",
        disabled_at: new Date().toISOString(),
      },
    });
    await expect(attempt).rejects.toBeInstanceOf(DomainError);
    await expect(attempt).rejects.toMatchObject({ kind: "validation_failed", issues: [{ path: "type" }] });
  });
});

describe("announcing many notices at once (the recorder's flush)", () => {
  const notice = (project: string, i: number): OperationalNotice => ({
    type: "delivery.exhausted",
    tenantId: "t",
    projectId: project,
    endpointId: `endpoint-${project}`,
    data: { n: i },
    key: `§herald/exhausted/${project}/${i}`,
  });

  /** Event use cases that record each batch publish and answer each event as `answer` says. */
  function recordingEvents(answer: (type: string, key: string) => "ok" | "refused" | "down") {
    const batches: { project: string; keys: string[] }[] = [];
    const events = {
      publish: () => Promise.reject(new Error("notices are published in batches")),
      publishMany: async (scope: { projectId: string }, inputs: readonly PublishInput[]) => {
        batches.push({ project: scope.projectId, keys: inputs.map((i) => i.idempotencyKey!) });
        return inputs.map((i) => {
          const a = answer(i.type, i.idempotencyKey!);
          if (a === "refused") return { error: new DomainError("validation_failed", "refused") };
          if (a === "down") return { error: new Error("the database is gone") };
          return { ok: {} };
        });
      },
    } as unknown as EventUseCases;
    return { batches, events };
  }

  const ops = (events: EventUseCases) =>
    operationalEvents({
      repos: {} as never,
      clock: { now: () => new Date() },
      events,
      logger: silentLogger,
      failingAfterMs: HOUR,
    });

  it("publishes one batch per project and 100 notices, each occurrence once, and drops a refused one", async () => {
    const { batches, events } = recordingEvents((_, key) => (key.endsWith("/a/7") ? "refused" : "ok"));
    const a = Array.from({ length: 230 }, (_, i) => notice("a", i));
    const b = Array.from({ length: 3 }, (_, i) => notice("b", i));
    await expect(ops(events).announce([...a, b[0]!, a[0]!, ...b.slice(1)], [])).resolves.toEqual([]);
    expect(batches.map((x) => [x.project, x.keys.length])).toEqual([
      ["a", 100],
      ["b", 3],
      ["a", 100],
      ["a", 30],
    ]);
    const published = batches.flatMap((x) => x.keys);
    expect(new Set(published).size).toBe(published.length);
    expect(new Set(published)).toEqual(new Set([...a, ...b].map((n) => n.key)));
  });

  it("throws a failure that is not a refusal, after every project's batches ran, so the flush tries again", async () => {
    const { batches, events } = recordingEvents((_, key) => (key.includes("/a/") ? "down" : "ok"));
    const a = Array.from({ length: 150 }, (_, i) => notice("a", i));
    const b = Array.from({ length: 2 }, (_, i) => notice("b", i));
    await expect(ops(events).announce([...a, ...b], [])).rejects.toThrow("the database is gone");
    // Project a stopped at its first batch; project b's was published all the same.
    expect(batches.map((x) => [x.project, x.keys.length])).toEqual([
      ["a", 100],
      ["b", 2],
    ]);
  });
});
