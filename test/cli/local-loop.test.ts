import { MongoClient } from "mongodb";
import { afterAll, describe, expect, inject, it } from "vitest";
import type { Delivery, WebhookWithSecret } from "../../clients/typescript/client.ts";
import { runCli } from "../../src/cli/main.ts";
import { freePort, type HeraldProcess, startHerald } from "../support/herald-process.ts";
import { recordingIo } from "./helpers.ts";

// The loop the README promises: a real Herald process (HERALD_ALLOW_HTTP_URLS and
// HERALD_ALLOW_PRIVATE_NETWORKS on) delivering to `herald listen`, driven by the CLI.

const uri = inject("mongoUri");
const db = `herald_cli_loop_${crypto.randomUUID().slice(0, 8)}`;
let server: HeraldProcess | undefined;
const stopListen = new AbortController();

afterAll(async () => {
  stopListen.abort();
  await server?.stop();
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 3_000 });
  try {
    await client.db(db).dropDatabase();
  } finally {
    await client.close();
  }
});

async function herald(argv: string[], env: Record<string, string>) {
  const rec = recordingIo(env);
  const code = await runCli(argv, rec.io);
  expect(code, `herald ${argv.join(" ")}: ${rec.err.join("\n")}`).toBe(0);
  return rec.out.join("\n");
}

describe("a local loop: Herald → herald listen", () => {
  it("delivers a published event and a test event, signed, to the local receiver", async () => {
    server = await startHerald({
      env: {
        MONGODB_URI: uri,
        MONGODB_DB: db,
        HERALD_ALLOW_HTTP_URLS: "true",
        HERALD_ALLOW_PRIVATE_NETWORKS: "true",
      },
    });
    const { token } = JSON.parse(
      await herald(["tokens", "create", "--json"], { MONGODB_URI: uri, MONGODB_DB: db }),
    ) as { token: string };
    const env = { HERALD_URL: server.baseUrl, HERALD_TOKEN: token };

    const port = await freePort();
    const url = `http://127.0.0.1:${port}/`;
    const webhook = JSON.parse(
      await herald(
        ["webhooks", "create", "--url", url, "--events", "message.delivered,domain.verified", "--json"],
        env,
      ),
    ) as WebhookWithSecret;

    const listen = recordingIo({ HERALD_WEBHOOK_SECRET: webhook.secret });
    const listening = runCli(["listen", "--port", String(port)], listen.io, { signal: stopListen.signal });
    await listen.waitForOut(/^Listening on /);

    const sent = JSON.parse(await herald(["events", "send", "message.delivered", "--json"], env)) as {
      id: string;
    };
    const line = await listen.waitForOut(new RegExp(sent.id), 20_000);
    expect(line).toMatch(new RegExp(`✔ verified +message\\.delivered +${sent.id}  latency `));

    const test = JSON.parse(
      await herald(["webhooks", "test", webhook.id, "--type", "domain.verified", "--json"], env),
    ) as {
      event: { id: string };
    };
    expect(await listen.waitForOut(new RegExp(test.event.id), 20_000)).toContain("✔ verified");

    const deadline = Date.now() + 20_000;
    let deliveries: Delivery[] = [];
    while (Date.now() < deadline) {
      deliveries = (
        JSON.parse(await herald(["deliveries", "list", webhook.id, "--json"], env)) as { data: Delivery[] }
      ).data;
      if (deliveries.every((d) => d.status === "succeeded") && deliveries.length === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(deliveries.map((d) => [d.event_id, d.status, d.response_status])).toEqual([
      [test.event.id, "succeeded", 200],
      [sent.id, "succeeded", 200],
    ]);
    stopListen.abort();
    expect(await listening).toBe(0);
  });
});
