import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { behaviours, mostAtOnce, type Receiver, startReceiver } from "./receiver.ts";
import { until } from "./until.ts";

// The test receiver's count of requests in flight together, which the multi-process and failover
// tests hold Herald's per-endpoint cap to: counted in arrivals and answers, never in milliseconds.

let rx: Receiver | null = null;
afterEach(async () => {
  await rx?.close();
  rx = null;
});

const post = (path: string) =>
  fetch(`${rx!.origin}${path}`, { method: "POST", body: "{}" }).then((r) => r.arrayBuffer());

describe("mostAtOnce", () => {
  it("counts a request sent the moment the one before it was answered as after it, not beside it", async () => {
    rx = await startReceiver({ secrets: ["whsec_x"], behaviour: behaviours.slow(30) });
    for (let i = 0; i < 5; i++) await post("/a");
    const got = rx.requests;
    expect(got.map((r) => r.arrivalsWhenAnswered)).toEqual([1, 2, 3, 4, 5]);
    expect(mostAtOnce(got)).toBe(1);
  });

  it("counts requests of one path held together, and those of different paths apart", async () => {
    rx = await startReceiver({ secrets: ["whsec_x"], behaviour: behaviours.slow(30) });
    await Promise.all([post("/a"), post("/a"), post("/a"), post("/b")]);
    expect(mostAtOnce(rx.requests)).toBe(3);
    expect(mostAtOnce(rx.requests.filter((r) => r.path === "/b"))).toBe(1);
  });

  it("ends a held request when its sender goes away (its connection closes), though it is never answered", async () => {
    rx = await startReceiver({
      secrets: ["whsec_x"],
      behaviour: (req) => (req.index === 0 ? { kind: "hang" } : behaviours.slow(10)),
    });
    const { port } = new URL(rx.origin);
    const gone = connect(Number(port), "127.0.0.1");
    gone.write(`POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}`);
    await rx.waitFor(1);
    gone.destroy();
    await until(() => rx!.requests[0]!.arrivalsWhenAnswered !== null, "the first request ended");
    await post("/a");
    expect(mostAtOnce(rx.requests)).toBe(1);
  });

  it("counts a request never answered as in flight to the end", () => {
    const at = (index: number, path: string, arrivalsWhenAnswered: number | null) =>
      ({ index, path, arrivalsWhenAnswered }) as Parameters<typeof mostAtOnce>[0][number];
    expect(mostAtOnce([at(0, "/a", null), at(1, "/a", 2), at(2, "/a", 3)])).toBe(2);
    expect(mostAtOnce([at(0, "/a", 1), at(1, "/a", 2), at(2, "/a", 3)])).toBe(1);
  });
});
