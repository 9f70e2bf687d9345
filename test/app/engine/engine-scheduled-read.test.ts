import { describe, expect, it } from "vitest";
import { createMemoryRepositories } from "../../../src/adapters/memory/repositories.ts";
import { SCHEDULED_READ_CAP_MS } from "../../../src/app/engine/scheduled-read.ts";
import type { DueRequest } from "../../../src/app/ports/deliveries.ts";
import type { Repositories } from "../../../src/app/ports/store.ts";
import { repeatAttempt } from "../../../src/domain/delivery.ts";
import { assignShards, shardOf } from "../../../src/domain/shards.ts";
import { engineHarness, SCOPE, sampleMessage, scriptedSender } from "../../support/engine-harness.ts";
import { until } from "../../support/until.ts";
import { type Harness, harness, setup } from "./engine-suite.ts";

// The schedule's once-a-second tick reads the database only when something may have come due that
// nothing announced (ADR 30, "The scheduled read waits"), on a store that says when the next comes due.

/** The memory store, its due read answering `next` as PostgreSQL's does, its due reads counted. */
function answeringNext(repos: Repositories = createMemoryRepositories()) {
  const reads = { n: 0 };
  const due = repos.deliveries.due.bind(repos.deliveries);
  repos.deliveries.due = async (r: DueRequest) => {
    reads.n++;
    const answer = await due(r);
    if (!r.until) return answer;
    const soon = await due({ ...r, now: r.until, limit: 1_000_000, excludeWebhookIds: [], excludeIds: [] });
    const later = soon.map((d) => d.scheduledAt.getTime()).filter((t) => t > r.now.getTime());
    answer.next = later.length > 0 ? new Date(Math.min(...later)) : null;
    return answer;
  };
  return { repos, reads };
}

/** Due signals within one process, for engines sharing one memory store; `relisten` as after a lost connection. */
function dueBus() {
  const listeners = new Map<(ids: readonly string[]) => void, (() => void) | undefined>();
  const announced: string[][] = [];
  return {
    announced,
    live: true,
    announce(endpointIds: readonly string[]) {
      announced.push([...endpointIds]);
      for (const heard of listeners.keys()) queueMicrotask(() => heard(endpointIds));
    },
    listen(heard: (ids: readonly string[]) => void, listening?: () => void) {
      listeners.set(heard, listening);
      return () => listeners.delete(heard);
    },
    relisten() {
      for (const listening of listeners.values()) listening?.();
    },
  };
}

/** Ticks after `ms` of the test's clock, and waits for what the tick started. */
async function tickAfter(t: Harness, ms: number) {
  t.clock.advance(ms);
  t.dispatcher.tick();
  await t.dispatcher.idle();
}

/** Stores a manual attempt of the endpoint's first delivery, due now, that nothing announces. */
async function storedQuietly(t: Harness, endpointId: string) {
  const [first] = await t.history(endpointId);
  const now = t.clock.now();
  const d = repeatAttempt(first!, {
    id: crypto.randomUUID(),
    attempt: 9,
    trigger: "manual",
    url: first!.url,
    scheduledAt: now,
    createdAt: now,
  });
  await t.repos.deliveries.insertMany([d]);
  return d;
}

async function published(t: Harness) {
  const { endpoint } = await t.endpoints.create(SCOPE, {
    url: "https://x.example.com/",
    events: ["message.sent"],
  });
  await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
  await t.dispatcher.idle();
  return endpoint;
}

describe("the scheduled read (ADR 30)", () => {
  it("reads nothing while nothing can have come due, and what nothing announced within the cap", async () => {
    const { repos, reads } = answeringNext();
    const t = await setup({ repos });
    // The last read: the start's (the publish was handed over), at the test clock's start.
    const endpoint = await published(t);
    const before = reads.n;
    const quiet = await storedQuietly(t, endpoint.id);
    for (let s = 1; s < SCHEDULED_READ_CAP_MS / 1_000; s++) await tickAfter(t, 1_000);
    expect(reads.n).toBe(before);
    expect(t.sender.requests).toHaveLength(1);
    // The cap: the tick that finds it passed since the last read reads, whatever that read answered.
    await tickAfter(t, 1_000);
    expect(reads.n).toBe(before + 1);
    expect(t.sender.requests).toHaveLength(2);
    expect((await t.deliveries.get(SCOPE, quiet.id)).status).toBe("succeeded");
  });

  it("sends a retry due in 3 s on time, while the ticks before it read nothing", async () => {
    let answer!: () => void;
    const gate = new Promise<void>((r) => {
      answer = r;
    });
    const sender = scriptedSender(async (_req, n) => {
      if (n === 1) await gate;
      return n === 1 ? { ok: false, responseStatus: 500 } : { ok: true, responseStatus: 200 };
    });
    const { repos, reads } = answeringNext();
    const t = await setup({ repos, sender, options: { retryScheduleMs: [3_000] } });
    await t.dispatcher.idle();
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await until(() => t.sender.requests.length === 1);
    // Answered after every read so far: only the result's record tells the engine about its retry.
    answer();
    await t.dispatcher.idle();
    const [, retry] = await t.history(endpoint.id);
    expect(retry!.scheduledAt.getTime() - t.clock.now().getTime()).toBe(3_000);
    const before = reads.n;
    await tickAfter(t, 1_000);
    await tickAfter(t, 1_000);
    expect(reads.n).toBe(before);
    await tickAfter(t, 1_000);
    expect(t.sender.requests).toHaveLength(2);
    expect((await t.history(endpoint.id)).map((d) => d.status)).toEqual(["failed", "succeeded"]);
  });

  it("reads at the next tick what it let go unsent and still due", async () => {
    const { repos, reads } = answeringNext();
    const t = await setup({ repos });
    const endpoint = await published(t);
    // The endpoint's read fails once: the claimed delivery is let go, pending and due.
    const getMany = t.repos.endpoints.getMany.bind(t.repos.endpoints);
    let fail = true;
    t.repos.endpoints.getMany = async (ids) => {
      if (fail) {
        fail = false;
        throw new Error("the store does not answer");
      }
      return getMany(ids);
    };
    await storedQuietly(t, endpoint.id);
    t.dispatcher.wake();
    await t.dispatcher.idle();
    expect(fail).toBe(false);
    expect(t.sender.requests).toHaveLength(1);
    const before = reads.n;
    await tickAfter(t, 1_000);
    expect(reads.n).toBe(before + 1);
    expect(t.sender.requests).toHaveLength(2);
  });

  it("reads a shard taken over at once, not at the tick its last answer waits for", async () => {
    const { repos, reads } = answeringNext();
    const t = await harness({ repos, options: { ownershipTickMs: 20 } });
    // Another live process holds the endpoint's shard, with work due in it that nobody announces.
    let { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    while (assignShards(["elsewhere", "test"]).get(shardOf(endpoint.id)) !== "elsewhere") {
      await t.endpoints.remove(SCOPE, endpoint.id);
      ({ endpoint } = await t.endpoints.create(SCOPE, {
        url: "https://x.example.com/",
        events: ["message.sent"],
      }));
    }
    const far = new Date(t.clock.now().getTime() + 86_400_000);
    const shard = shardOf(endpoint.id);
    await t.repos.shards.beat("elsewhere", far);
    await t.repos.shards.acquire([{ shard, generation: 1, owner: "elsewhere", expiresAt: far }]);
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    t.dispatcher.start();
    await t.dispatcher.idle();
    await tickAfter(t, 1_000);
    expect(t.sender.requests).toHaveLength(0);
    const before = reads.n;
    // It stops: its shard is given back, and this process's next round takes it.
    await t.repos.shards.release("elsewhere", [{ shard, generation: 1 }]);
    await t.repos.shards.leave("elsewhere");
    await until(() => t.sender.requests.length === 1, "the shard taken over was read and its work sent");
    expect(reads.n).toBeGreaterThan(before);
  });

  it("a manual retry through another process tells the owner, which sends it at once", async () => {
    const bus = dueBus();
    const { repos } = answeringNext(Object.assign(createMemoryRepositories(), { due: bus }));
    const t = await setup({ repos });
    const endpoint = await published(t);
    // Another process on the same store, which holds no shard (its engine never started).
    const other = await engineHarness({ repos, cipher: t.cipher, owner: "elsewhere" });
    const [first] = await t.history(endpoint.id);
    await other.deliveries.retry(SCOPE, first!.id);
    expect(bus.announced).toEqual([[endpoint.id]]);
    await until(() => t.sender.requests.length === 2, "the owner sent the manual retry");
    expect(other.sender.requests).toHaveLength(0);
  });

  it("reads at once when the channel listens again after a loss: what was announced meanwhile is gone", async () => {
    const bus = dueBus();
    const { repos, reads } = answeringNext(Object.assign(createMemoryRepositories(), { due: bus }));
    const t = await setup({ repos });
    const endpoint = await published(t);
    await storedQuietly(t, endpoint.id);
    const before = reads.n;
    bus.relisten();
    await until(() => t.sender.requests.length === 2, "the read after the re-listen sent it");
    expect(reads.n).toBeGreaterThan(before);
  });

  it("reads every tick while the channel is not known to work", async () => {
    const bus = Object.assign(dueBus(), { live: false });
    const { repos, reads } = answeringNext(Object.assign(createMemoryRepositories(), { due: bus }));
    const t = await setup({ repos });
    await published(t);
    const before = reads.n;
    for (let s = 1; s <= 3; s++) await tickAfter(t, 1_000);
    expect(reads.n).toBe(before + 3);
  });
});
