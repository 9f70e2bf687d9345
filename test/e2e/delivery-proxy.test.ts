import { randomBytes, randomUUID } from "node:crypto";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startConnectProxy } from "../support/connect-proxy.ts";
import { lines, run } from "../support/herald-cli.ts";
import type { Runtime } from "../support/herald-process.ts";
import { behaviours, startReceiver } from "../support/receiver.ts";
import { runtimeBin } from "../support/runtimes.ts";
import {
  allDeliveries,
  createEndpoint,
  deliveryWorld,
  eventBody,
  publishRaw,
  waitUntil,
} from "./delivery-support.ts";

// HERALD_DELIVERY_PROXY in a real Herald process on each runtime: deliveries tunnel through a real
// CONNECT proxy on loopback to the address Herald checked, refusals by the proxy are recorded and
// retried like any failure, a name resolving to a private address never reaches the proxy, and the
// proxy's password appears nowhere: not in the output, /metrics or the delivery records.

const ROOT = resolve(import.meta.dirname, "../..");
const RUNTIMES: Runtime[] = ["node", "bun", "deno"];
const ENTRY: Record<Runtime, [string, string[]]> = {
  node: [process.execPath, [join(ROOT, "src/main/main.node.ts")]],
  bun: [runtimeBin("bun"), [join(ROOT, "src/main/main.bun.ts")]],
  deno: [
    runtimeBin("deno"),
    ["run", "--allow-all", "--node-modules-dir=manual", join(ROOT, "src/main/main.deno.ts")],
  ],
};

const world = await deliveryWorld("herald_proxy");
const PASSWORD = `pr0xy-${randomBytes(9).toString("hex")}`;
const BASIC = Buffer.from(`herald:${PASSWORD}`).toString("base64");

afterAll(async () => {
  await world.close();
});

describe.each(RUNTIMES)("deliveries through an egress proxy on %s", (runtime) => {
  it("a bad HERALD_DELIVERY_PROXY stops the process with exit code 2 and one line, without the password", async () => {
    const [cmd, args] = ENTRY[runtime];
    const r = await run(cmd, args, {
      env: world.env({ HERALD_DELIVERY_PROXY: `socks5://herald:${PASSWORD}@127.0.0.1:1080`, PORT: "0" }),
    });
    expect({ code: r.code, stderr: lines(r.stderr) }).toEqual({
      code: 2,
      stderr: [
        "herald: HERALD_DELIVERY_PROXY must be an http:// proxy URL (CONNECT); socks5:// proxies are not supported",
      ],
    });
    expect(r.stdout).toBe("");
  });

  it("ignores HTTPS_PROXY and HTTP_PROXY: without HERALD_DELIVERY_PROXY a delivery goes direct", async () => {
    // Bun's and Deno's fetch would use them (by host name, outside the address check) if Herald left them
    // in its environment; Node's never does. The proxy tunnels, so only its connection count tells.
    const px = await startConnectProxy();
    const rx = await startReceiver({ tls: world.tls, secrets: [], behaviour: behaviours.status(200, "ok") });
    try {
      const ambient = `http://127.0.0.1:${px.port}`;
      const h = await world.start(
        { HTTPS_PROXY: ambient, HTTP_PROXY: ambient, DENO_CERT: world.tls.caCertPath },
        { runtime },
      );
      const client = world.client(h.baseUrl);
      const direct = await createEndpoint(client, `https://localhost:${rx.port}/direct`, ["message.clicked"]);
      expect(
        (await publishRaw(h.baseUrl, world.token, eventBody("message.clicked"), randomUUID())).status,
      ).toBe(202);
      const [got] = await rx.waitFor(1);
      expect(got?.path).toBe("/direct");
      expect(px.connections).toBe(0);
      await client.DELETE("/api/v1/webhooks/{id}", { params: { path: { id: direct.id } } });
      expect(await h.stop()).toBe(0);
      expect(h.output().includes("HTTPS_PROXY, HTTP_PROXY set: ignored")).toBe(runtime !== "node");
    } finally {
      await Promise.all([px.close(), rx.close()]);
    }
  });

  it("tunnels to the checked address, records and retries refusals, refuses private names first, never shows the password", async () => {
    const px = await startConnectProxy({ credentials: `herald:${PASSWORD}` });
    const rx = await startReceiver({ tls: world.tls, secrets: [], behaviour: behaviours.status(200, "ok") });
    const refusing = await startReceiver({ tls: world.tls, secrets: [] });
    px.setAnswer((req) => (req.target.endsWith(`:${refusing.port}`) ? 502 : "tunnel"));
    const proxyEnv = {
      HERALD_DELIVERY_PROXY: `http://herald:${PASSWORD}@127.0.0.1:${px.port}`,
      HERALD_LOG_LEVEL: "debug",
      DENO_CERT: world.tls.caCertPath,
      // Ignored by Herald (every delivery here goes through HERALD_DELIVERY_PROXY), warned about on Bun and Deno.
      HTTPS_PROXY: `http://ambient:${PASSWORD}@127.0.0.1:9`,
    };
    const outputs: string[] = [];
    try {
      const h = await world.start(proxyEnv, { runtime });
      const client = world.client(h.baseUrl);
      const ok = await createEndpoint(client, `https://localhost:${rx.port}/webhook`, ["message.delivered"]);
      const refused = await createEndpoint(client, `https://localhost:${refusing.port}/webhook`, [
        "message.bounced",
      ]);
      expect(
        (await publishRaw(h.baseUrl, world.token, eventBody("message.delivered"), randomUUID())).status,
      ).toBe(202);
      expect(
        (await publishRaw(h.baseUrl, world.token, eventBody("message.bounced"), randomUUID())).status,
      ).toBe(202);

      const [got] = await rx.waitFor(1);
      expect(got?.headers.host).toBe(`localhost:${rx.port}`);
      expect(got?.sni).toBe("localhost");
      expect(got?.headers["proxy-authorization"]).toBeUndefined();
      const toReceiver = px.requests.find((r) => r.target.endsWith(`:${rx.port}`));
      expect(toReceiver).toMatchObject({ method: "CONNECT", target: `127.0.0.1:${rx.port}`, status: 200 });
      expect(toReceiver?.headers["proxy-authorization"]).toBe(`Basic ${BASIC}`);
      // Only addresses were asked for, never a name.
      expect(px.requests.every((r) => r.target.startsWith("127.0.0.1:"))).toBe(true);

      // The proxy's 502 is an attempt failure like any other: recorded, then retried automatically.
      await waitUntil(
        async () => (await allDeliveries(client, refused.id, "failed")).length >= 2,
        () => `two failed attempts through the refusing proxy: ${JSON.stringify(px.requests)}`,
      );
      const failed = await allDeliveries(client, refused.id, "failed");
      expect(failed.every((d) => d.error === "connection_error" && d.response_status === null)).toBe(true);
      expect(failed.map((d) => d.trigger)).toContain("automatic");
      expect(refusing.requests).toHaveLength(0);
      const succeeded = await allDeliveries(client, ok.id, "succeeded");
      expect(succeeded.map((d) => [d.error, d.response_status])).toEqual([[null, 200]]);

      const metrics = await (await fetch(`${h.baseUrl}/metrics`)).text();
      const records = JSON.stringify([...failed, ...succeeded]);
      expect(await h.stop()).toBe(0);
      outputs.push(h.output(), metrics, records);
      expect(h.output()).toContain(`http://127.0.0.1:${px.port}`);
      expect(h.output().includes("HTTPS_PROXY set:")).toBe(runtime !== "node");

      // Private networks refused: localhost resolves to 127.0.0.1, so nothing may reach the proxy.
      const before = px.connections;
      const strict = await world.start({ ...proxyEnv, HERALD_ALLOW_PRIVATE_NETWORKS: "false" }, { runtime });
      const strictClient = world.client(strict.baseUrl);
      const inner = await createEndpoint(strictClient, `https://localhost:${rx.port}/inner`, [
        "message.opened",
      ]);
      expect(
        (await publishRaw(strict.baseUrl, world.token, eventBody("message.opened"), randomUUID())).status,
      ).toBe(202);
      await waitUntil(
        async () => (await allDeliveries(strictClient, inner.id, "failed")).length >= 1,
        () => "a failed attempt to a name resolving to a private address",
      );
      const blocked = await allDeliveries(strictClient, inner.id, "failed");
      expect(blocked[0]).toMatchObject({ error: "blocked_address", response_status: null });
      expect(px.connections).toBe(before);
      expect(rx.requests.map((r) => r.path)).toEqual(["/webhook"]);
      const strictMetrics = await (await fetch(`${strict.baseUrl}/metrics`)).text();
      // Nothing of this runtime's is left pending for the next runtime's processes on the same database.
      for (const id of [ok.id, refused.id, inner.id])
        await strictClient.DELETE("/api/v1/webhooks/{id}", { params: { path: { id } } });
      expect(await strict.stop()).toBe(0);
      outputs.push(strict.output(), strictMetrics, JSON.stringify(blocked));

      for (const text of outputs) {
        expect(text).not.toContain(PASSWORD);
        expect(text).not.toContain(BASIC);
      }
    } finally {
      await Promise.all([px.close(), rx.close(), refusing.close()]);
    }
  });
});
