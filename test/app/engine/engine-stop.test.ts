import { afterEach, describe, expect, it } from "vitest";
import { SHARD_COUNT } from "../../../src/domain/shards.ts";
import { SCOPE, sampleMessage, scriptedSender } from "../../support/engine-harness.ts";
import { until } from "../../support/until.ts";
import { type Harness, setup } from "./engine-suite.ts";

// A stop "at once" (a second Ctrl-C, ADR 25): the shards, the heartbeat and the proof of life are given
// up before anything waits, so the endpoints' next owners take them in their next round.
const release: (() => void)[] = [];
// Runs before engine-suite.ts's stop, which would wait on the stuck send.
afterEach(() => {
  for (const go of release.splice(0)) go();
});

/** An engine whose one send in flight never answers until the test lets it. */
async function oneSendStuck() {
  const sender = scriptedSender(
    () => new Promise((r) => release.push(() => r({ ok: true, responseStatus: 200 }))),
  );
  const h = await setup({ sender });
  await h.endpoints.create(SCOPE, { url: "https://x.example.com/", events: ["message.sent"] });
  await h.dispatcher.idle();
  await h.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
  await until(() => release.length === 1);
  return h;
}

const givenBack = async (t: Harness) => {
  const heads = await t.repos.shards.heads();
  return heads.length === SHARD_COUNT && heads.every((l) => l.expiresAt.getTime() === 0);
};

describe("a stop at once", () => {
  it("stop(0) gives every shard back and leaves while a send is still in flight", async () => {
    const t = await oneSendStuck();
    expect(t.dispatcher.inFlight).toBe(1);
    await t.dispatcher.stop(0);
    expect(await givenBack(t)).toBe(true);
    expect(await t.repos.shards.live(new Date(0))).toEqual([]);
    // The send is still on its way: nothing waited for it.
    expect(t.dispatcher.inFlight).toBe(1);
  });

  it("giveUp() does the same without stopping anything else, and answers at once", async () => {
    const t = await oneSendStuck();
    await t.dispatcher.giveUp();
    expect(await givenBack(t)).toBe(true);
    expect(await t.repos.shards.live(new Date(0))).toEqual([]);
    expect(t.dispatcher.inFlight).toBe(1);
  });
});
