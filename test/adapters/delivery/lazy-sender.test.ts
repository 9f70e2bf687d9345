import { describe, expect, it } from "vitest";
import { lazySender } from "../../../src/adapters/delivery/lazy-sender.ts";
import type { DeliveryRequest, Sender } from "../../../src/app/ports/sending.ts";
import { delivery } from "./helpers.ts";

const OK = {
  ok: true,
  responseStatus: 200,
  responseBody: "",
  error: null,
  durationMs: 1,
  retryAfterMs: null,
};

function fake() {
  const s = { sent: [] as DeliveryRequest[], closed: 0 } as Sender & {
    sent: DeliveryRequest[];
    closed: number;
  };
  s.send = async (r) => {
    s.sent.push(r);
    return OK;
  };
  s.close = async () => {
    s.closed++;
  };
  return s;
}

describe("lazySender", () => {
  it("loads its sender once, at the first send or when warmed, and closes what it loaded", async () => {
    const inner = fake();
    let loads = 0;
    const lazy = lazySender(async () => {
      loads++;
      return inner;
    });
    expect(loads).toBe(0);
    lazy.warm();
    await expect(
      Promise.all([lazy.send(delivery("https://a/")), lazy.send(delivery("https://b/"))]),
    ).resolves.toEqual([OK, OK]);
    expect(loads).toBe(1);
    expect(inner.sent.map((r) => r.url)).toEqual(["https://a/", "https://b/"]);
    await lazy.close();
    expect(inner.closed).toBe(1);
  });

  it("loads nothing to close when it never sent", async () => {
    let loads = 0;
    const lazy = lazySender(async () => {
      loads++;
      return fake();
    });
    await lazy.close();
    expect(loads).toBe(0);
  });

  it("tries a failed load again at the next send (the failed send throws, as the engine expects)", async () => {
    const inner = fake();
    let loads = 0;
    const lazy = lazySender(async () => {
      if (++loads === 1) throw new Error("cannot load");
      return inner;
    });
    lazy.warm();
    await expect(lazy.send(delivery("https://a/"))).rejects.toThrow("cannot load");
    await expect(lazy.send(delivery("https://a/"))).resolves.toEqual(OK);
    expect(loads).toBe(2);
  });
});
