import { describe, expect, it } from "vitest";
import { createMemoryRepositories } from "../../../src/adapters/memory/repositories.ts";
import { assignShards, shardOf } from "../../../src/domain/shards.ts";
import { engineHarness, SCOPE, sampleMessage, scriptedSender } from "../../support/engine-harness.ts";
import { until } from "../../support/until.ts";
import { type Harness, harness, setup } from "./engine-suite.ts";

// The publish hand-over (ADR 9): what a publish stores goes to its shard's owner, here or elsewhere, without a read.

describe("claiming", () => {
  describe("the publish hand-over (ADR 9)", () => {
    /** Counts the engine's reads of the store: due work, endpoints by id, events by id. */
    function countReads(t: Harness) {
      const n = { due: 0, endpoints: 0, events: 0 };
      const due = t.repos.deliveries.due.bind(t.repos.deliveries);
      t.repos.deliveries.due = (r) => {
        n.due++;
        return due(r);
      };
      const endpoints = t.repos.endpoints.getMany.bind(t.repos.endpoints);
      t.repos.endpoints.getMany = (ids) => {
        n.endpoints++;
        return endpoints(ids);
      };
      const events = t.repos.events.getMany.bind(t.repos.events);
      t.repos.events.getMany = (ids) => {
        n.events++;
        return events(ids);
      };
      return n;
    }

    it("a publish to an idle engine is sent to its 8 endpoints with no due read, no endpoints read and no event read", async () => {
      const atSend: { due: number; endpoints: number; events: number }[] = [];
      let n = { due: 0, endpoints: 0, events: 0 };
      const t = await setup({
        sender: scriptedSender(() => {
          atSend.push({ ...n });
          return { ok: true, responseStatus: 200 };
        }),
      });
      const created = [];
      for (let i = 0; i < 8; i++)
        created.push(
          (await t.endpoints.create(SCOPE, { url: `https://x${i}.example.com/`, events: ["message.sent"] }))
            .endpoint,
        );
      await t.dispatcher.idle();
      n = countReads(t);
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
      await until(() => atSend.length === 8);
      expect(atSend).toEqual(Array(8).fill({ due: 0, endpoints: 0, events: 0 }));
      await t.dispatcher.idle();
      for (const e of created) expect((await t.history(e.id)).map((d) => d.status)).toEqual(["succeeded"]);
      expect(t.sender.requests.map((r) => r.url).sort()).toEqual(created.map((e) => e.url).sort());
      // Nothing more was read to send them, only their results written.
      expect(n).toEqual({ due: 0, endpoints: 0, events: 0 });
    });

    it("leaves deliveries of a shard another process owns to it: this one neither sends nor holds them", async () => {
      const t = await harness();
      // An endpoint whose shard this process takes while "elsewhere" runs, and one whose shard "elsewhere" holds.
      let mine = await t.endpoints.create(SCOPE, {
        url: "https://mine.example.com/",
        events: ["message.sent"],
      });
      while (assignShards(["elsewhere", "test"]).get(shardOf(mine.endpoint.id)) !== "test") {
        await t.endpoints.remove(SCOPE, mine.endpoint.id);
        mine = await t.endpoints.create(SCOPE, {
          url: "https://mine.example.com/",
          events: ["message.sent"],
        });
      }
      let theirs = await t.endpoints.create(SCOPE, {
        url: "https://theirs.example.com/",
        events: ["message.sent"],
      });
      while (shardOf(theirs.endpoint.id) === shardOf(mine.endpoint.id)) {
        await t.endpoints.remove(SCOPE, theirs.endpoint.id);
        theirs = await t.endpoints.create(SCOPE, {
          url: "https://theirs.example.com/",
          events: ["message.sent"],
        });
      }
      // Another live process holds the second endpoint's shard, for longer than the test runs.
      const far = new Date(t.clock.now().getTime() + 86_400_000);
      await t.repos.shards.beat("elsewhere", far);
      expect(
        await t.repos.shards.acquire([
          { shard: shardOf(theirs.endpoint.id), generation: 1, owner: "elsewhere", expiresAt: far },
        ]),
      ).toEqual([shardOf(theirs.endpoint.id)]);
      t.dispatcher.start();
      await t.dispatcher.idle();
      const n = countReads(t);
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
      await until(() => t.sender.requests.length === 1);
      await t.dispatcher.idle();
      expect(t.sender.requests.map((r) => r.url)).toEqual(["https://mine.example.com/"]);
      expect((await t.history(mine.endpoint.id)).map((d) => d.status)).toEqual(["succeeded"]);
      expect((await t.history(theirs.endpoint.id)).map((d) => d.status)).toEqual(["pending"]);
      // The other shard's delivery went the existing way: a due read, of this process's shards only.
      expect(n.due).toBeGreaterThan(0);
    });

    it.each([
      ["tells the owner and reads nothing for it", true],
      [
        "reads for it itself and announces nothing, as without signals, while the channel is not known to work",
        false,
      ],
    ])("a publish storing work in a shard another process holds %s", async (_, live) => {
      const bus = Object.assign(dueBus(), { live });
      const t = await harness({ repos: Object.assign(createMemoryRepositories(), { due: bus }) });
      let theirs = await t.endpoints.create(SCOPE, {
        url: "https://theirs.example.com/",
        events: ["message.sent"],
      });
      // Another live process holds its shard, for longer than the test runs.
      const far = new Date(t.clock.now().getTime() + 86_400_000);
      await t.repos.shards.beat("elsewhere", far);
      while (assignShards(["elsewhere", "test"]).get(shardOf(theirs.endpoint.id)) !== "elsewhere") {
        await t.endpoints.remove(SCOPE, theirs.endpoint.id);
        theirs = await t.endpoints.create(SCOPE, {
          url: "https://theirs.example.com/",
          events: ["message.sent"],
        });
      }
      const shard = shardOf(theirs.endpoint.id);
      expect(
        await t.repos.shards.acquire([{ shard, generation: 1, owner: "elsewhere", expiresAt: far }]),
      ).toEqual([shard]);
      t.dispatcher.start();
      await t.dispatcher.idle();
      const n = countReads(t);
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
      await t.dispatcher.idle();
      if (live) {
        expect(bus.announced).toEqual([[theirs.endpoint.id]]);
        // A read here would find nothing: it reads this process's shards only.
        expect(n.due).toBe(0);
      } else {
        expect(bus.announced).toEqual([]);
        expect(n.due).toBeGreaterThan(0);
      }
      expect(t.sender.requests).toEqual([]);
      expect((await t.history(theirs.endpoint.id)).map((d) => d.status)).toEqual(["pending"]);
    });

    it("reads and sends at once what another process announces in a shard it holds, and nothing else wakes it", async () => {
      const bus = dueBus();
      const repos = Object.assign(createMemoryRepositories(), { due: bus });
      const t = await setup({ repos });
      const { endpoint } = await t.endpoints.create(SCOPE, {
        url: "https://x.example.com/",
        events: ["message.sent"],
      });
      await t.dispatcher.idle();
      // Another process on the same store, which holds no shard (its engine never started): its publish
      // is stored and announced, and reaches this engine only through the announcement.
      const other = await engineHarness({ repos, cipher: t.cipher, owner: "elsewhere" });
      const n = countReads(t);
      await other.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
      expect(bus.announced).toEqual([[endpoint.id]]);
      await until(() => t.sender.requests.length === 1);
      await t.dispatcher.idle();
      expect(n.due).toBeGreaterThan(0);
      expect((await t.history(endpoint.id)).map((d) => d.status)).toEqual(["succeeded"]);
      // Stopped, it no longer listens.
      await t.dispatcher.stop(1_000);
      expect(bus.listeners).toBe(0);
    });

    it("a due read on its way when a publish hands over the same delivery: it is sent once", async () => {
      const t = await setup();
      const { endpoint } = await t.endpoints.create(SCOPE, {
        url: "https://x.example.com/",
        events: ["message.sent"],
      });
      await t.dispatcher.idle();
      // The next due read is asked before the publish and answered after its write: it finds the delivery.
      let go!: () => void;
      const gate = new Promise<void>((r) => {
        go = r;
      });
      let asked = false;
      const due = t.repos.deliveries.due.bind(t.repos.deliveries);
      t.repos.deliveries.due = async (r) => {
        asked = true;
        await gate;
        return due(r);
      };
      t.dispatcher.wake();
      await until(() => asked);
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
      expect((await t.history(endpoint.id)).map((d) => d.status)).toEqual(["pending"]);
      go();
      await t.dispatcher.idle();
      await t.drain();
      expect(t.sender.requests).toHaveLength(1);
      expect((await t.history(endpoint.id)).map((d) => d.status)).toEqual(["succeeded"]);
    });

    it("a graceful stop sends nothing of what was handed over and queued: it stays pending, and the next owner sends it once", async () => {
      const held: (() => void)[] = [];
      const sender = scriptedSender(
        () => new Promise((r) => held.push(() => r({ ok: true, responseStatus: 200 }))),
      );
      const t = await setup({ sender, options: { endpointConcurrency: 1 } });
      const { endpoint } = await t.endpoints.create(SCOPE, {
        url: "https://x.example.com/",
        events: ["message.sent"],
      });
      await t.dispatcher.idle();
      for (let i = 0; i < 3; i++)
        await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
      await until(() => held.length === 1);
      const stopping = t.dispatcher.stop(5_000);
      for (const go of held.splice(0)) go();
      await stopping;
      expect(t.sender.requests).toHaveLength(1);
      expect((await t.history(endpoint.id)).map((d) => d.status).sort()).toEqual([
        "pending",
        "pending",
        "succeeded",
      ]);
      const next = await setup({ repos: t.repos, cipher: t.cipher, owner: "next" });
      await next.drain();
      expect(next.sender.requests).toHaveLength(2);
      const sent = [...t.sender.requests, ...next.sender.requests].map((r) => r.eventId);
      expect(new Set(sent).size).toBe(3);
      expect((await t.history(endpoint.id)).every((d) => d.status === "succeeded")).toBe(true);
    });

    it("an endpoint this engine disables (410 Gone) is read again for the first attempts handed over before: they are skipped, not sent", async () => {
      const held: (() => void)[] = [];
      // The first answer waits for the test; any later one (there should be none) comes at once.
      const sender = scriptedSender((_req, n) =>
        n === 1
          ? new Promise((r) => held.push(() => r({ ok: false, responseStatus: 410 })))
          : { ok: false, responseStatus: 410 },
      );
      const t = await setup({ sender, options: { endpointConcurrency: 1 } });
      const { endpoint } = await t.endpoints.create(SCOPE, {
        url: "https://x.example.com/",
        events: ["message.sent"],
      });
      await t.dispatcher.idle();
      for (let i = 0; i < 3; i++)
        await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
      await until(() => held.length === 1);
      for (const go of held.splice(0)) go();
      await t.dispatcher.idle();
      expect(t.sender.requests).toHaveLength(1);
      expect((await t.history(endpoint.id)).map((d) => d.status).sort()).toEqual([
        "failed",
        "skipped",
        "skipped",
      ]);
    });
  });
});

/** Due signals within one process, for engines sharing one memory store. */
function dueBus() {
  const listeners = new Set<(endpointIds: readonly string[]) => void>();
  const announced: string[][] = [];
  return {
    announced,
    live: true,
    get listeners() {
      return listeners.size;
    },
    announce(endpointIds: readonly string[]) {
      announced.push([...endpointIds]);
      for (const heard of listeners) queueMicrotask(() => heard(endpointIds));
    },
    listen(heard: (endpointIds: readonly string[]) => void) {
      listeners.add(heard);
      return () => listeners.delete(heard);
    },
  };
}
