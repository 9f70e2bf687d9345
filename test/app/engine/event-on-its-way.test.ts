import { describe, expect, it } from "vitest";
import { SCOPE, sampleMessage } from "../../support/engine-harness.ts";
import { until } from "../../support/until.ts";
import { setup } from "./engine-suite.ts";

// A due read can find a delivery between its publish's two writes (ADR 2; stores that write them apart).
// Its event comes a moment later: the delivery is sent then, with no time passing on the clock. It was
// moved five seconds on before (the amendment of 2026-11-28), which on MongoDB under load left
// deliveries waiting for the next scheduled read, and this suite's engine, which has none, for ever.

describe("a delivery read while its publish is on its way", () => {
  it("is sent once its event is stored, without waiting for the clock", async () => {
    const t = await setup();
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://hooks.example.com/a",
      events: ["message.sent"],
    });
    // The publish's event write waits until the engine has read the delivery and looked for its event.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const insert = t.repos.events.insert.bind(t.repos.events);
    t.repos.events.insert = async (e) => {
      await gate;
      return insert(e);
    };
    let looked = 0;
    const getMany = t.repos.events.getMany.bind(t.repos.events);
    t.repos.events.getMany = async (ids) => {
      looked++;
      return getMany(ids);
    };
    // A slow store: whatever the engine writes of it meanwhile lands after the publish has ended.
    const postpone = t.repos.deliveries.postpone.bind(t.repos.deliveries);
    t.repos.deliveries.postpone = async (ids, at) => {
      await publishing;
      return postpone(ids, at);
    };
    const publishing = t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await until(async () => (await t.history(endpoint.id)).length === 1, "the delivery stored");
    t.dispatcher.wake();
    await until(() => looked > 0, "the engine looked for the event");
    expect(t.sender.requests).toHaveLength(0);
    open();
    await publishing;
    await until(() => t.sender.requests.length === 1, "sent once its event is stored");
    await t.drain();
    expect((await t.history(endpoint.id)).map((d) => d.status)).toEqual(["succeeded"]);
    expect(t.sender.requests).toHaveLength(1);
  });
});
