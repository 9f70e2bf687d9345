import { describe, expect, it } from "vitest";
import { idleWaiting } from "../../../src/app/engine/idle.ts";

describe("waiting for idleness", () => {
  it("answers at once when idle; otherwise at the first check that finds it idle", async () => {
    let busy = 1;
    const idle = idleWaiting(() => busy === 0);
    let told = 0;
    const a = idle.wait().then(() => told++);
    const b = idle.wait().then(() => told++);
    idle.check();
    await Promise.resolve();
    expect(told).toBe(0);
    busy = 0;
    idle.check();
    await Promise.all([a, b]);
    expect(told).toBe(2);
    await idle.wait();
  });
});
