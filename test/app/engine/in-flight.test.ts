import { describe, expect, it } from "vitest";
import { inFlightCounts } from "../../../src/app/engine/in-flight.ts";

describe("deliveries in flight", () => {
  it("counts in all and per endpoint; an endpoint with none is not listed", () => {
    const f = inFlightCounts();
    f.add("a");
    f.add("a");
    f.add("b");
    expect(f.total).toBe(3);
    expect([...f.perEndpoint]).toEqual([
      ["a", 2],
      ["b", 1],
    ]);
    f.remove("b");
    f.remove("a");
    expect(f.total).toBe(1);
    expect([...f.perEndpoint]).toEqual([["a", 1]]);
  });

  it("none() resolves when the last send ends, or when its time is up", async () => {
    const f = inFlightCounts();
    await f.none(1_000_000);
    f.add("a");
    let ended = false;
    const waiting = f.none(1_000_000).then(() => {
      ended = true;
    });
    await Promise.resolve();
    expect(ended).toBe(false);
    f.remove("a");
    await waiting;
    expect(ended).toBe(true);
    f.add("a");
    const started = performance.now();
    await f.none(20);
    expect(f.total).toBe(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
  });
});
