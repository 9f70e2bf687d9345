import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createHeraldClient } from "../../clients/typescript/client.ts";
import { type HeraldProcess, startHerald } from "../support/herald-process.ts";
import { startReceiver } from "../support/receiver.ts";
import { testTls } from "../support/tls.ts";
import { createEndpoint, eventBody, eventIdOf, publishRaw, waitUntil } from "./delivery-support.ts";

// ADR 25: on the embedded database the pid lock proves a process the only one, so a process restarted
// after a crash takes its predecessor's shards in its first round instead of waiting out their leases
// (HERALD_LEASE_MARGIN, 60 s by default).
describe("a restart after a crash on the embedded database (real processes, HTTPS)", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "herald-failover-embedded-"));
  const started: HeraldProcess[] = [];
  afterAll(async () => {
    await Promise.allSettled(started.map((p) => p.stop(15_000)));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("delivers at once after the restart, taking the dead predecessor's shards", async () => {
    const tls = await testTls();
    const secrets: string[] = [];
    const rx = await startReceiver({ tls, secrets });
    const env = {
      HERALD_DATA_DIR: dataDir,
      HERALD_MASTER_KEY: randomBytes(32).toString("base64"),
      HERALD_ALLOW_PRIVATE_NETWORKS: "true",
      NODE_EXTRA_CA_CERTS: tls.caCertPath,
      HERALD_LOG_LEVEL: "warn",
    };
    try {
      const first = await startHerald({ runtime: "node", env });
      started.push(first);
      let token = "";
      await waitUntil(
        () => {
          token = first.output().match(/first API token[^\n]*?(hrld_[A-Za-z0-9_-]{43})/)?.[1] ?? "";
          return token !== "";
        },
        () => "the first token printed",
      );
      const client = createHeraldClient({ baseUrl: first.baseUrl, token });
      secrets.push((await createEndpoint(client, `${rx.url}/e`, ["message.delivered"])).secret);
      const one = await publishRaw(first.baseUrl, token, eventBody("message.delivered"), randomUUID());
      await waitUntil(
        () => rx.requests.some((q) => eventIdOf(q) === one.id),
        () => "the first event delivered",
      );
      await first.kill();

      const second = await startHerald({ runtime: "node", env });
      started.push(second);
      const readyAt = Date.now();
      const two = await publishRaw(second.baseUrl, token, eventBody("message.delivered"), randomUUID());
      expect(two.status).toBe(202);
      await waitUntil(
        () => rx.requests.some((q) => eventIdOf(q) === two.id),
        () => "the event published after the restart delivered",
      );
      const tookMs = Date.now() - readyAt;
      console.log(`failover embedded: delivered ${tookMs} ms after the restarted process answered /healthz`);
      expect(second.output()).toContain("took over the shards of a process that died");
      expect(second.output()).not.toContain("lease expired");
      expect(tookMs).toBeLessThan(30_000);
      expect(rx.requests.filter((q) => !q.verdict.ok)).toEqual([]);
      expect(await second.stop(15_000)).toBe(0);
    } finally {
      await rx.close();
    }
  }, 300_000);
});
