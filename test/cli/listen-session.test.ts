import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock, systemIds } from "../../src/adapters/system.ts";
import { parseConfig } from "../../src/app/config.ts";
import { silentLogger } from "../../src/app/logger.ts";
import type { Sender } from "../../src/app/ports/sending.ts";
import { tokenUseCases } from "../../src/app/tokens.ts";
import { runCli } from "../../src/cli/main.ts";
import { createHerald, type Herald } from "../../src/main/herald.ts";
import { deliveredEvent } from "../support/engine-harness.ts";
import { type RecordingIo, recordingIo } from "./helpers.ts";

// `herald listen --events` without --port against a whole Herald in this process (memory store, its
// engine running, CONTRACT's defaults): the session is created or taken up, each delivery streamed,
// verified, printed and answered, and the endpoint deleted on Ctrl-C (ADR 29). The same over real
// processes, a killed CLI and Bun and Deno: test/e2e/listen-session.test.ts.

let h: Herald;
let env: Record<string, string>;
const deps = () => ({ fetch: (r: Request) => Promise.resolve(h.fetch(r)) });

const noHttp: Sender = {
  send: async () => {
    throw new Error("a listen session's delivery went to the HTTP sender");
  },
  close: async () => {},
};

beforeAll(async () => {
  const config = parseConfig({ HERALD_STORE: "memory", HERALD_RETRY_SCHEDULE: "1s,1s,1s" });
  h = await createHerald({ config, logger: silentLogger, makeSender: () => noHttp, printFirstToken: false });
  const { token } = await tokenUseCases({
    tokens: h.repos.tokens,
    clock: systemClock,
    ids: systemIds,
  }).create({});
  env = { HERALD_URL: "http://herald.test", HERALD_TOKEN: token };
});

afterAll(async () => {
  await h?.stop(0);
});

async function api(method: string, path: string, body?: unknown) {
  const res = await h.fetch(
    new Request(`http://herald.test/api/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${env.HERALD_TOKEN}`, "Content-Type": "application/json" },
      body: body === undefined ? null : JSON.stringify(body),
    }),
  );
  return {
    status: res.status,
    json: res.status === 204 ? null : ((await res.json()) as Record<string, unknown>),
  };
}

interface Running {
  rec: RecordingIo;
  id: string;
  stop(): Promise<number>;
}

async function listen(args: string[]): Promise<Running> {
  const rec = recordingIo(env);
  const abort = new AbortController();
  const done = runCli(["listen", ...args], rec.io, { ...deps(), signal: abort.signal });
  // With --json, what listen says goes to stderr and stdout has only the deliveries.
  const said = args.includes("--json") ? rec.waitForErr.bind(rec) : rec.waitForOut.bind(rec);
  const line = await Promise.race([
    said(/^(Created|Reusing) endpoint /).catch(() => null),
    done.then(() => null),
  ]);
  if (!line) throw new Error(`listen did not start: ${rec.err.join("\n")}`);
  await said(/^Signing secret .*whsec_/);
  return {
    rec,
    id: line.split(" ")[2]!,
    stop: () => {
      abort.abort();
      return done;
    },
  };
}

async function publish(): Promise<string> {
  const sample = await api("POST", "/events", deliveredEvent());
  expect(sample.status).toBe(202);
  return sample.json!.id as string;
}

describe("herald listen --events (a listen session)", () => {
  it("opens a session, verifies, prints and answers each delivery, and deletes it on Ctrl-C", async () => {
    const l = await listen(["--events", "message.delivered"]);
    expect(l.rec.out.join("\n")).toMatch(
      /^Created endpoint [0-9a-f-]{36} → listen:\/\/[0-9a-f-]{36} for message\.delivered$/m,
    );
    const id = await publish();
    await l.rec.waitForOut(new RegExp(`✔ verified +message\\.delivered +${id} `));
    const list = async () =>
      (await api("GET", `/webhooks/${l.id}/deliveries`)).json!.data as Record<string, unknown>[];
    await expect
      .poll(async () => (await list())[0], { timeout: 10_000 })
      .toMatchObject({
        event_id: id,
        status: "succeeded",
        response_status: 200,
        response_body: "herald listen: ok",
      });
    expect(await l.stop()).toBe(0);
    expect(l.rec.out.slice(-2)).toEqual([`Deleted endpoint ${l.id}.`, "Stopped."]);
    expect((await api("GET", `/webhooks/${l.id}`)).status).toBe(404);
  });

  it("takes up a session left by --keep, unless another listen is receiving it", async () => {
    const first = await listen(["--events", "message.delivered", "--keep"]);
    // While the first one receives, a second one gets a session of its own.
    const beside = await listen(["--events", "message.delivered"]);
    expect(beside.rec.out.join("\n")).toMatch(/^Created endpoint /m);
    expect(beside.id).not.toBe(first.id);
    expect(await beside.stop()).toBe(0);

    expect(await first.stop()).toBe(0);
    expect(first.rec.out.join("\n")).toMatch(/^It stays when listen stops \(--keep\)\.$/m);
    const again = await listen(["--events", "message.delivered", "--json"]);
    expect(again.id).toBe(first.id);
    expect(again.rec.err.join("\n")).toMatch(new RegExp(`^Reusing endpoint ${first.id} `, "m"));
    const id = await publish();
    const line = await again.rec.waitForOut(new RegExp(id));
    expect(JSON.parse(line)).toMatchObject({ verified: true, event_id: id, answered: 200 });
    expect(await again.stop()).toBe(0);
  });
});
