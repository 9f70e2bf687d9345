import { afterEach, expect, it } from "vitest";
import type { LogFields, Logger } from "../../../src/app/logger.ts";
import type { AttemptResult } from "../../../src/app/ports/deliveries.ts";
import type { Cursor, Page } from "../../../src/app/ports/paging.ts";
import { type Repositories, StoreUnavailableError, withFailure } from "../../../src/app/ports/store.ts";
import type { Delivery } from "../../../src/domain/delivery.ts";
import { engineHarness, SCOPE, sampleMessage, scriptedSender } from "../../support/engine-harness.ts";
import { until } from "../../support/until.ts";

// Issue 31's cases, run on every store by record.test.ts (memory, PostgreSQL) and record-mongo.test.ts
// (the run's MongoDB-compatible server, FerretDB in CI, where issue 31 was seen). A batch of results that
// fails because of what it is (its size, its time, one result in it) must not stop recording, and the
// engine must not send on what it cannot record. The store double wraps a real store's `record`: it fails
// writes above a size, or those holding one result, or every write while "down"; everything else reaches
// the store.

type Harness = Awaited<ReturnType<typeof engineHarness>>;
let h: Harness | null = null;

/** Wraps the store's `record`: `fail` answers the error a write of these results meets, or null. */
function recordDouble(repos: Repositories, fail: (results: readonly AttemptResult[]) => unknown) {
  const record = repos.deliveries.record.bind(repos.deliveries);
  const seen = { sizes: [] as number[], written: [] as string[] };
  repos.deliveries.record = async (results) => {
    seen.sizes.push(results.length);
    const e = fail(results);
    if (e) throw e;
    await record(results);
    seen.written.push(...results.map((r) => r.id));
  };
  return seen;
}

function capturingLogger() {
  const lines: { level: string; msg: string; fields: LogFields }[] = [];
  const logger: Logger = {
    debug: () => {},
    info: () => {},
    warn: (msg, fields = {}) => lines.push({ level: "warn", msg, fields }),
    error: (msg, fields = {}) => lines.push({ level: "error", msg, fields }),
    child: () => logger,
  };
  return { logger, lines };
}

const refused = (answer: string) => withFailure(new Error(answer), { kind: "refused", answer });
const tooLarge = (answer: string) => withFailure(new Error(answer), { kind: "too-large", answer });

async function publishMany(t: Harness, n: number) {
  const { endpoint } = await t.endpoints.create(SCOPE, {
    url: "https://hooks.example.com/r",
    events: ["message.delivered"],
  });
  for (let i = 0; i < n; i++)
    await t.events.publish(SCOPE, { type: "message.delivered", data: sampleMessage() });
  return endpoint;
}

async function allOf(t: Harness, webhookId: string) {
  const out = [];
  let cursor: Cursor | null = null;
  do {
    const page: Page<Delivery> = await t.repos.deliveries.list(SCOPE, webhookId, {}, { limit: 100, cursor });
    out.push(...page.data);
    cursor = page.next;
  } while (cursor);
  return out;
}

async function statuses(t: Harness, webhookId: string) {
  const out: Record<string, number> = {};
  for (const d of await allOf(t, webhookId)) out[d.status] = (out[d.status] ?? 0) + 1;
  return out;
}

/** Where the engine and the endpoint's deliveries stand: a failure's message. */
async function standing(t: Harness, webhookId: string) {
  const all = await allOf(t, webhookId);
  const now = t.clock.now().getTime();
  return JSON.stringify({
    sent: t.sender.requests.length,
    inFlight: t.dispatcher.inFlight,
    recording: t.dispatcher.recording(),
    // Each pending delivery: its attempt, and how far its schedule is from the clock (ms).
    pending: all
      .filter((d) => d.status === "pending")
      .map((d) => [d.id, d.attempt, d.scheduledAt.getTime() - now]),
  });
}

/** Waits until `n` of the endpoint's deliveries succeeded; a failure says where the engine stands. */
async function untilSucceeded(t: Harness, webhookId: string, n: number, what: string) {
  let last: Record<string, number> = {};
  let where = "";
  await until(
    async () => {
      last = await statuses(t, webhookId);
      if (last.succeeded === n) return true;
      where = await standing(t, webhookId);
      return false;
    },
    () => `${what}: ${JSON.stringify(last)} ${where}`,
  );
}

/** Registers the cases for one store; `makeRepos` gives each case its repositories on a fresh database. */
export function recordingCases(makeRepos: () => Promise<Repositories>): void {
  afterEach(async () => {
    await h?.dispatcher.stop(1_000);
    h = null;
  });
  it("a write refused above a size is retried split: everything is recorded exactly once, nothing sent twice", async () => {
    const repos = await makeRepos();
    const seen = recordDouble(repos, (rs) =>
      rs.length > 7 ? tooLarge(`${rs.length} results are too many`) : null,
    );
    // The first 20 sends answer together, so their results meet in one write the double refuses.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const sender = scriptedSender(async (_req, n) => {
      if (n <= 20) await gate;
      return { ok: true, responseStatus: 200 };
    });
    h = await engineHarness({ repos, sender, options: { flushDelayMs: 200, endpointConcurrency: 50 } });
    h.dispatcher.start();
    const endpoint = await publishMany(h, 60);
    await until(() => h!.sender.requests.length >= 20, "20 sends waiting to answer");
    open();
    await h.drain();
    // drain() can answer between a hand-over and its claim on a slower store: wait for the outcome itself.
    await untilSucceeded(h, endpoint.id, 60, "all 60 recorded");
    expect(await statuses(h, endpoint.id)).toEqual({ succeeded: 60 });
    expect(h.sender.requests).toHaveLength(60);
    expect(seen.written).toHaveLength(60);
    expect(new Set(seen.written).size).toBe(60);
    // The double did refuse writes (the case happened), and no write was ever larger than the bound.
    expect(Math.max(...seen.sizes)).toBeGreaterThan(7);
    expect(Math.max(...seen.sizes)).toBeLessThanOrEqual(200);
    const backlog = h.dispatcher.recording();
    expect(backlog.failures["too-large"]).toBeGreaterThan(0);
    expect(backlog).toMatchObject({ waiting: 0, handedBack: {}, stalledMs: null, failure: null });
  });

  it("one result that always fails is reported and handed back; the others are recorded; it is sent again later", async () => {
    const repos = await makeRepos();
    const { logger, lines } = capturingLogger();
    let poisoning = true;
    const sender = scriptedSender((_req, n) => ({
      ok: true,
      responseStatus: 200,
      responseBody: n === 5 ? "poison" : "ok",
    }));
    const seen = recordDouble(repos, (rs) =>
      poisoning && rs.some((r) => r.responseBody === "poison") ? refused("document failed validation") : null,
    );
    // A slow store: the hand-back's move lands a moment after it is asked for, as on a loaded machine.
    const postpone = repos.deliveries.postpone.bind(repos.deliveries);
    repos.deliveries.postpone = async (ids, until) => {
      await new Promise((r) => setTimeout(r, 200));
      return postpone(ids, until);
    };
    h = await engineHarness({ repos, sender, logger, options: { flushDelayMs: 50 } });
    h.dispatcher.start();
    const endpoint = await publishMany(h, 30);
    await h.drain();
    // Tried alone three times (a second apart) before it is given up.
    await until(() => h!.dispatcher.recording().handedBack.refused === 1, "the poisoned result handed back");
    const poisonedEvent = h.sender.requests[4]!.eventId;
    const poisoned = (await allOf(h, endpoint.id)).find((d) => d.eventId === poisonedEvent)!.id;
    expect(await statuses(h, endpoint.id), await standing(h, endpoint.id)).toEqual({
      succeeded: 29,
      pending: 1,
    });
    expect(new Set(seen.written).size).toBe(29);
    expect(seen.written).not.toContain(poisoned);
    const report = lines.find((l) => l.level === "error" && l.fields.delivery_id === poisoned);
    expect(report?.msg).toMatch(/handed back/);
    expect(report?.fields).toMatchObject({
      failure: "refused",
      answer: "document failed validation",
      tries: 3,
    });
    expect(lines.some((l) => /unreachable/.test(JSON.stringify(l)))).toBe(false);
    expect(h.dispatcher.recording().handedBack).toEqual({ refused: 1 });
    // Handed back: pending, moved a minute on, not sent again before then.
    const record = await h.repos.deliveries.get(SCOPE, poisoned);
    expect(record).toMatchObject({ status: "pending", attempt: 1 });
    expect(record!.scheduledAt.getTime()).toBe(h.clock.now().getTime() + 60_000);
    await h.drain();
    expect(h.sender.requests).toHaveLength(30);

    poisoning = false;
    h.clock.advance(60_000);
    await h.drain();
    expect(h.sender.requests).toHaveLength(31);
    expect(h.sender.requests[30]!.eventId).toBe(poisonedEvent);
    expect(await statuses(h, endpoint.id)).toEqual({ succeeded: 30 });
    expect(new Set(seen.written).size).toBe(30);
  });

  it("while results cannot be recorded no new work is taken; once they can, everything sent is recorded once", async () => {
    const repos = await makeRepos();
    let down = true;
    const seen = recordDouble(repos, () => (down ? new StoreUnavailableError() : null));
    // The first two sends fail: once recording is back, their retries must come too.
    const sender = scriptedSender((_req, n) =>
      n <= 2 ? { ok: false, responseStatus: 500, error: "http_status" } : { ok: true, responseStatus: 200 },
    );
    h = await engineHarness({ repos, sender, options: { concurrency: 4, endpointConcurrency: 4 } });
    h.dispatcher.start();
    const endpoint = await publishMany(h, 40);
    await until(() => seen.sizes.length >= 2, "two failed writes");
    const sentWhileDown = h.sender.requests.length;
    expect(sentWhileDown).toBeLessThan(40);
    // Past a retry of the write: still down, so still nothing new is sent.
    await until(() => seen.sizes.length >= 4, "two more failed writes");
    expect(h.sender.requests).toHaveLength(sentWhileDown);
    const behind = h.dispatcher.recording();
    expect(behind).toMatchObject({ waiting: sentWhileDown, failure: "unreachable" });
    expect(behind.stalledMs).not.toBeNull();

    down = false;
    await untilSucceeded(h, endpoint.id, 38, "38 recorded after recovery");
    await h.drain();
    expect(await statuses(h, endpoint.id)).toEqual({ succeeded: 38, failed: 2, pending: 2 });
    expect(h.sender.requests).toHaveLength(40);
    expect(new Set(h.sender.requests.map((r) => r.eventId)).size).toBe(40);
    expect(seen.written).toHaveLength(40);
    expect(new Set(seen.written).size).toBe(40);
    // The retries are due 5 s later (random() is 0.5: no jitter), and are sent and recorded then.
    h.clock.advance(5_000);
    await h.drain();
    await untilSucceeded(h, endpoint.id, 40, "both retries recorded");
    expect(h.sender.requests).toHaveLength(42);
    expect(h.dispatcher.recording()).toMatchObject({ waiting: 0, stalledMs: null, handedBack: {} });
  });

  it("a result that times out alone is handed back, and the engine does not stay stalled", async () => {
    const repos = await makeRepos();
    const sender = scriptedSender((_req, n) => ({
      ok: true,
      responseStatus: 200,
      responseBody: n === 1 ? "slow" : "ok",
    }));
    recordDouble(repos, (rs) =>
      rs.some((r) => r.responseBody === "slow")
        ? new StoreUnavailableError(undefined, { kind: "timeout" })
        : null,
    );
    h = await engineHarness({ repos, sender });
    h.dispatcher.start();
    const endpoint = await publishMany(h, 1);
    await until(() => h!.dispatcher.recording().handedBack.timeout === 1, "the timed-out result handed back");
    // Nothing waits any more: new work is taken, sent and recorded.
    for (let i = 0; i < 5; i++)
      await h.events.publish(SCOPE, { type: "message.delivered", data: sampleMessage() });
    await untilSucceeded(h, endpoint.id, 5, "5 new events recorded");
    expect(await statuses(h, endpoint.id)).toEqual({ succeeded: 5, pending: 1 });
    // The store can show the last write before its answer reaches the recorder: the backlog empties then.
    await until(() => h!.dispatcher.recording().waiting === 0, "the backlog empty");
    expect(h.dispatcher.recording()).toMatchObject({ waiting: 0, stalledMs: null });
    // The handed-back delivery waits its minute: six sends, none of them again.
    expect(h.sender.requests).toHaveLength(6);
  });
}
