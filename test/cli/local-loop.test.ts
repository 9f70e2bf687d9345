import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Delivery } from "../../clients/typescript/client.ts";
import { runCli } from "../../src/cli/main.ts";
import { freePort, type HeraldProcess, startHerald } from "../support/herald-process.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { freshStore } from "../support/store.ts";
import { type RecordingIo, recordingIo } from "./helpers.ts";

// The loop the README promises: a real Herald process (HERALD_ALLOW_HTTP_URLS and
// HERALD_ALLOW_PRIVATE_NETWORKS on) delivering to `herald listen --events`, which registers its own
// endpoint, verifies with that endpoint's secret and deletes it when it stops (unless --keep).

const store = await freshStore("herald_cli_loop");
let server: HeraldProcess;
let env: Record<string, string>;
const stops: AbortController[] = [];

beforeAll(async () => {
  server = await startHerald({
    env: {
      ...store.env,
      HERALD_ALLOW_HTTP_URLS: "true",
      HERALD_ALLOW_PRIVATE_NETWORKS: "true",
    },
  });
  const { token } = JSON.parse(await herald(["tokens", "create", "--json"], store.env)) as { token: string };
  env = { HERALD_URL: server.baseUrl, HERALD_TOKEN: token };
});

afterAll(async () => {
  for (const s of stops) s.abort();
  await server?.stop();
  await store.cleanup();
});

async function herald(argv: string[], e: Record<string, string>) {
  const rec = recordingIo(e);
  const code = await runCli(argv, rec.io);
  expect(code, `herald ${argv.join(" ")}: ${rec.err.join("\n")}`).toBe(0);
  return rec.out.join("\n");
}

interface Listening {
  rec: RecordingIo;
  id: string;
  secret: string;
  /** Ctrl-C: resolves with listen's exit code. */
  stop(): Promise<number>;
}

async function listen(args: string[]): Promise<Listening> {
  const rec = recordingIo(env);
  const stop = new AbortController();
  stops.push(stop);
  const done = runCli(["listen", ...args], rec.io, { signal: stop.signal });
  const started = await Promise.race([rec.waitForOut(/^Verifying with /), done.then(() => null)]);
  if (!started) throw new Error(`listen did not start: ${rec.err.join("\n")}`);
  const endpoint = await rec.waitForOut(/^(Created|Reusing) endpoint /);
  const secretLine = await rec.waitForOut(/^Signing secret /);
  return {
    rec,
    id: endpoint.split(" ")[2]!,
    secret: secretLine.split(" ").at(-1)!,
    stop: async () => {
      stop.abort();
      return done;
    },
  };
}

/** `herald webhooks get <id>`: the endpoint, or null when Herald answers 404. */
async function endpoint(id: string): Promise<{ url: string; events: string[]; enabled: boolean } | null> {
  const rec = recordingIo(env);
  const code = await runCli(["webhooks", "get", id, "--json"], rec.io);
  if (code !== 0) {
    expect(rec.err[0]).toMatch(/^herald: 404 not_found/);
    return null;
  }
  return JSON.parse(rec.out.join("\n"));
}

describe("a local loop: Herald → herald listen --events", () => {
  it("registers itself, verifies published and test events with the printed secret, deletes its endpoint on stop", async () => {
    const l = await listen(["--port", "0", "--events", "message.delivered,domain.verified"]);
    expect(l.secret).toMatch(/^whsec_/);
    const url = (await l.rec.waitForOut(/^Listening on /)).slice("Listening on ".length);
    expect(await endpoint(l.id)).toMatchObject({
      url,
      events: ["message.delivered", "domain.verified"],
      enabled: true,
    });
    expect(l.rec.out).toContain("It is deleted when listen stops (pass --keep to keep it).");

    const sent = JSON.parse(await herald(["events", "send", "message.delivered", "--json"], env)) as {
      id: string;
    };
    const line = await l.rec.waitForOut(new RegExp(sent.id));
    expect(line).toMatch(new RegExp(`✔ verified +message\\.delivered +${sent.id}  latency `));

    const test = JSON.parse(
      await herald(["webhooks", "test", l.id, "--type", "domain.verified", "--json"], env),
    ) as { event: { id: string } };
    expect(await l.rec.waitForOut(new RegExp(test.event.id))).toContain("✔ verified");

    const deadline = Date.now() + PATIENCE_MS;
    let deliveries: Delivery[] = [];
    while (Date.now() < deadline) {
      deliveries = (
        JSON.parse(await herald(["deliveries", "list", l.id, "--json"], env)) as { data: Delivery[] }
      ).data;
      if (deliveries.length === 2 && deliveries.every((d) => d.status === "succeeded")) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(deliveries.map((d) => [d.event_id, d.status, d.response_status])).toEqual([
      [test.event.id, "succeeded", 200],
      [sent.id, "succeeded", 200],
    ]);

    expect(await l.stop()).toBe(0);
    expect(l.rec.out).toContain(`Deleted endpoint ${l.id}.`);
    expect(await endpoint(l.id)).toBeNull();
  });

  it("--keep keeps the endpoint; the next listen on that port reuses it with new types and a new secret", async () => {
    const port = String(await freePort());
    const first = await listen(["--port", port, "--events", "message.delivered", "--keep"]);
    expect(first.rec.out).toContain("It stays when listen stops (--keep).");
    expect(await first.stop()).toBe(0);
    expect(await endpoint(first.id)).toMatchObject({ events: ["message.delivered"] });

    const second = await listen(["--port", port, "--events", "message.bounced"]);
    expect(second.id).toBe(first.id);
    expect(second.rec.out.some((l) => l.startsWith(`Reusing endpoint ${first.id} `))).toBe(true);
    expect(second.secret).not.toBe(first.secret);
    expect(await endpoint(first.id)).toMatchObject({ events: ["message.bounced"], enabled: true });
    // Only the new secret is verified with: a delivery signed with it passes.
    const sent = JSON.parse(await herald(["events", "send", "message.bounced", "--json"], env)) as {
      id: string;
    };
    expect(await second.rec.waitForOut(new RegExp(sent.id))).toContain("✔ verified");
    expect(await second.stop()).toBe(0);
    expect(await endpoint(first.id)).toBeNull();
  });
});
