import { describe, expect, it } from "vitest";
import { SCOPE, sampleMessage } from "../../support/engine-harness.ts";
import { harness } from "./engine-suite.ts";

// A due read whose page filled before any endpoint's lane did (more endpoints × HERALD_ENDPOINT_CONCURRENCY's
// lane depth than the queue holds) left every endpoint with more due than it read. Their lanes were half
// full, so the next read left them out; no lane had reached its depth, so none was marked to be read
// again once low: the rest waited for the scheduled read, once a second (bench, 8 endpoints at
// HERALD_ENDPOINT_CONCURRENCY=40 or 50: 1,600 deliveries/s against 10,000 at 30). This harness has no
// scheduled read, so everything due must be sent by the engine's own reads.

describe("a due read cut by the queue's size", () => {
  it("reads the rest of each endpoint it read once its lane runs low, without a scheduled read", async () => {
    const t = await harness({
      options: { concurrency: 8, endpointConcurrency: 2, queueSize: 40, queueDepth: 16 },
    });
    for (let i = 0; i < 4; i++)
      await t.endpoints.create(SCOPE, { url: `https://hooks.example.com/${i}`, events: ["message.sent"] });
    // Stored before the engine runs: found by due reads, not handed over by the publishes.
    for (let i = 0; i < 50; i++)
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    t.dispatcher.start();
    await t.drain();
    expect(t.sender.requests).toHaveLength(200);
    expect(new Set(t.sender.requests.map((r) => `${r.eventId} ${r.url}`)).size).toBe(200);
  });
});
