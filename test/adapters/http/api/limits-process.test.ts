import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type HeraldProcess, startHerald } from "../../../support/herald-process.ts";

const ROOT = resolve(import.meta.dirname, "../../../..");

// The configuration reaches a real process: HERALD_RATE_LIMIT limits it, and an empty
// HERALD_RETRY_SCHEDULE stops it at start like every other empty value.
describe("limits in a real Herald process", () => {
  let herald: HeraldProcess | undefined;
  afterAll(async () => {
    await herald?.stop();
  });

  it("HERALD_RATE_LIMIT=3/m: the fourth request of a token answers 429 with Retry-After and the fields", async () => {
    herald = await startHerald({ env: { HERALD_STORE: "memory", HERALD_RATE_LIMIT: "3/m" } });
    const token = /first API token \(shown once; keep it\): (hrld_\S+)/.exec(herald.output())?.[1];
    expect(token, herald.output()).toBeDefined();
    const get = () =>
      fetch(`${herald!.baseUrl}/api/v1/webhooks`, { headers: { Authorization: `Bearer ${token}` } });
    for (let left = 2; left >= 0; left--) {
      const ok = await get();
      expect(ok.status).toBe(200);
      expect(ok.headers.get("ratelimit-policy")).toBe('"per-token";q=3;w=60');
      expect(ok.headers.get("ratelimit")).toMatch(new RegExp(`^"per-token";r=${left};t=\\d+$`));
    }
    const limited = await get();
    expect(limited.status).toBe(429);
    // 1 request per 20 s: the wait is at most 20 s (less if time passed since the first request).
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers.get("retry-after"))).toBeLessThanOrEqual(20);
    expect(await limited.json()).toMatchObject({ code: "rate_limited", status: 429 });
    expect((await fetch(`${herald.baseUrl}/healthz`)).status).toBe(200);
  });

  it("HERALD_PUBLISH_RATE_LIMIT=2/m: publishing has a budget of its own, apart from management calls", async () => {
    await herald?.stop();
    herald = await startHerald({
      env: { HERALD_STORE: "memory", HERALD_RATE_LIMIT: "100/s", HERALD_PUBLISH_RATE_LIMIT: "2/m" },
    });
    const token = /first API token \(shown once; keep it\): (hrld_\S+)/.exec(herald.output())?.[1];
    expect(token, herald.output()).toBeDefined();
    const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    const publish = () =>
      fetch(`${herald!.baseUrl}/api/v1/events`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          type: "domain.verified",
          data: {
            domain_id: "6f1c2b9e-8a44-4c1e-9a53-0d5b2f7e1a10",
            domain: "mail.example.com",
            status: "verified",
          },
        }),
      });
    for (let left = 1; left >= 0; left--) {
      const ok = await publish();
      expect(ok.status).toBe(202);
      expect(ok.headers.get("ratelimit-policy")).toBe('"publish";q=2;w=60');
    }
    const limited = await publish();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Management calls spend the other budget: still answered.
    const list = await fetch(`${herald.baseUrl}/api/v1/webhooks`, { headers });
    expect(list.status).toBe(200);
    expect(list.headers.get("ratelimit-policy")).toBe('"per-token";q=100;w=1');
  });

  it("an empty HERALD_RETRY_SCHEDULE stops the process with one line naming it and the way to turn retries off", () => {
    const run = spawnSync(process.execPath, [join(ROOT, "src/main/main.node.ts")], {
      cwd: ROOT,
      env: { ...process.env, HERALD_RETRY_SCHEDULE: "", PORT: "0", HOST: "127.0.0.1" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.status).toBe(2);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^herald: HERALD_RETRY_SCHEDULE must be .* or none for no retries \(got ""\)$/);
  });
});
