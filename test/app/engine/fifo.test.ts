import { describe, expect, it } from "vitest";
import type { DeliveryRequest } from "../../../src/app/ports/sending.ts";
import { SCOPE, sampleMessage, scriptedSender } from "../../support/engine-harness.ts";
import { until } from "../../support/until.ts";
import { type Harness, harness, setup } from "./engine-suite.ts";

// ADR 16: an endpoint with ordering "fifo" receives its events in the order Herald accepted them, one
// in flight at a time; a failing event holds the ones after it until it succeeds or is given up.

const FIFO = "https://fifo.example.com/";
const FREE = "https://free.example.com/";

/** A sender that answers after a few ms, as scripted per event, and notes the most in flight per URL. */
function orderSender(answer: (eventId: string, n: number) => boolean = () => true) {
  const inFlight = new Map<string, number>();
  const most = new Map<string, number>();
  const seen = new Map<string, number>();
  const sender = scriptedSender(async (req: DeliveryRequest) => {
    const now = (inFlight.get(req.url) ?? 0) + 1;
    inFlight.set(req.url, now);
    most.set(req.url, Math.max(most.get(req.url) ?? 0, now));
    const n = (seen.get(req.eventId) ?? 0) + 1;
    seen.set(req.eventId, n);
    await new Promise((r) => setTimeout(r, 3));
    inFlight.set(req.url, (inFlight.get(req.url) ?? 1) - 1);
    return answer(req.eventId, n) ? { ok: true, responseStatus: 200 } : { ok: false, responseStatus: 500 };
  });
  return {
    sender,
    order: (url: string) => sender.requests.filter((r) => r.url === url).map((r) => r.eventId),
    most: (url: string) => most.get(url) ?? 0,
  };
}

async function publish(t: Harness, n: number, type: "message.sent" | "message.opened" = "message.sent") {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push((await t.events.publish(SCOPE, { type, data: sampleMessage("sent") })).envelope.id);
  }
  return ids;
}

/** Wakes the engine until `check` holds (each step of a FIFO endpoint waits for the previous record). */
async function pumpUntil(t: Harness, check: () => boolean | Promise<boolean>, what: () => string) {
  await until(async () => {
    t.dispatcher.wake();
    return check();
  }, what);
  await t.dispatcher.idle();
}

describe("ordered delivery (ADR 16)", () => {
  it("sends a FIFO endpoint's events in acceptance order, one at a time; an unordered endpoint is not held up", async () => {
    const s = orderSender();
    const t = await setup({ sender: s.sender });
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: FIFO,
      events: ["message.sent"],
      ordering: "fifo",
    });
    await t.endpoints.create(SCOPE, { url: FREE, events: ["message.sent"] });
    const ids = await publish(t, 20);
    await pumpUntil(
      t,
      () => s.order(FIFO).length >= 20,
      () => `${s.order(FIFO).length} of 20`,
    );
    expect(s.order(FIFO)).toEqual(ids);
    expect(s.most(FIFO)).toBe(1);
    expect(s.order(FREE).sort()).toEqual([...ids].sort());
    expect(s.most(FREE)).toBeGreaterThan(1);
    expect((await t.endpoints.get(SCOPE, endpoint.id)).ordering).toBe("fifo");
  });

  it("holds the events after a failing one until it succeeds, and counts them as held", async () => {
    // The first event fails twice, then succeeds on its third attempt.
    let first = "";
    const s = orderSender((id, n) => id !== first || n >= 3);
    const t = await setup({ sender: s.sender, options: { retryScheduleMs: [5_000, 5_000, 5_000] } });
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: FIFO,
      events: ["message.sent"],
      ordering: "fifo",
    });
    const [a] = await publish(t, 1);
    first = a!;
    const rest = await publish(t, 3);
    await pumpUntil(
      t,
      () => s.order(FIFO).length >= 1,
      () => "nothing sent",
    );
    // E1 failed and waits 5 s for its retry; the three after it wait behind it.
    for (let i = 0; i < 5; i++) t.dispatcher.wake();
    await t.dispatcher.idle();
    expect(s.order(FIFO)).toEqual([a]);
    expect((await t.endpoints.held([endpoint])).get(endpoint.id)).toBe(3);
    t.clock.advance(5_000);
    await pumpUntil(
      t,
      () => s.order(FIFO).length >= 2,
      () => "no second attempt",
    );
    expect(s.order(FIFO)).toEqual([a, a]);
    t.clock.advance(5_000);
    await pumpUntil(
      t,
      () => s.order(FIFO).length >= 6,
      () => `${s.order(FIFO).length} of 6`,
    );
    expect(s.order(FIFO)).toEqual([a, a, a, ...rest]);
    expect(s.most(FIFO)).toBe(1);
    expect((await t.endpoints.held([endpoint])).get(endpoint.id)).toBe(0);
  });

  it("lets the next event go once a failing one is given up", async () => {
    let first = "";
    const s = orderSender((id) => id !== first);
    const t = await setup({ sender: s.sender, options: { retryScheduleMs: [5_000] } });
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: FIFO,
      events: ["message.sent"],
      ordering: "fifo",
    });
    const [a] = await publish(t, 1);
    first = a!;
    const rest = await publish(t, 2);
    await pumpUntil(
      t,
      () => s.order(FIFO).length >= 1,
      () => "nothing sent",
    );
    t.clock.advance(5_000);
    await pumpUntil(
      t,
      () => s.order(FIFO).length >= 4,
      () => `${s.order(FIFO).length} of 4`,
    );
    expect(s.order(FIFO)).toEqual([a, a, ...rest]);
    const history = await t.history(endpoint.id);
    expect(history.filter((d) => d.eventId === a).map((d) => d.status)).toEqual(["failed", "failed"]);
  });

  it("keeps order when an endpoint becomes FIFO after its events were queued, and when a manual retry of an earlier event comes", async () => {
    const s = orderSender();
    const t = await harness({ sender: s.sender });
    const { endpoint } = await t.endpoints.create(SCOPE, { url: FIFO, events: ["message.sent"] });
    const ids = await publish(t, 8);
    await t.endpoints.update(SCOPE, endpoint.id, { ordering: "fifo" });
    t.dispatcher.start();
    await pumpUntil(
      t,
      () => s.order(FIFO).length >= 8,
      () => `${s.order(FIFO).length} of 8`,
    );
    expect(s.order(FIFO)).toEqual(ids);
    expect(s.most(FIFO)).toBe(1);
    // A manual retry of the second event, then a new event: the retry carries its event's place.
    const second = (await t.history(endpoint.id)).find((d) => d.eventId === ids[1])!;
    await t.deliveries.retry(SCOPE, second.id);
    const [late] = await publish(t, 1);
    await pumpUntil(
      t,
      () => s.order(FIFO).length >= 10,
      () => `${s.order(FIFO).length} of 10`,
    );
    expect(s.order(FIFO).slice(8)).toEqual([ids[1], late]);
  });

  it("keeps order across a stop and a new owner: the one in flight is sent again, nothing skipped or reordered", async () => {
    const a = orderSender();
    // The first process hangs on the third event: it stops without recording it.
    const hang = new Promise<never>(() => {});
    const stuck = scriptedSender(async (req) => {
      const n = a.sender.requests.length;
      if (n >= 2) return hang;
      return a.sender.send(req);
    });
    const options = { deliveryTimeoutMs: 1_000, leaseMarginMs: 2_000 };
    const first = await setup({ sender: stuck, realTime: true, owner: "a", options });
    await first.endpoints.create(SCOPE, { url: FIFO, events: ["message.sent"], ordering: "fifo" });
    const ids = await publish(first, 6);
    await until(
      () => stuck.requests.length >= 3,
      () => `${stuck.requests.length} of 3 sent by the first process`,
    );
    // Stop with no grace: the third event's attempt is in flight and never recorded.
    await first.dispatcher.stop(0);
    const b = orderSender();
    const second = await harness({
      repos: first.repos,
      cipher: first.cipher,
      sender: b.sender,
      realTime: true,
      owner: "b",
      options,
    });
    second.dispatcher.start();
    await until(
      () => b.order(FIFO).length >= 4,
      () => `${b.order(FIFO).length} of 4 sent by the second process`,
    );
    const received = [...stuck.requests.map((r) => r.eventId), ...b.order(FIFO)];
    // At least once: the third event came twice, the rest once, in acceptance order.
    expect(received).toEqual([ids[0], ids[1], ids[2], ids[2], ids[3], ids[4], ids[5]]);
  });
});
