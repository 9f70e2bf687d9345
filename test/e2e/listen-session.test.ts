import { type ChildProcess, spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { verifyWebhook } from "../../clients/typescript/verify.ts";
import { run } from "../support/herald-cli.ts";
import { type HeraldProcess, type Runtime, startHerald, testRuntimes } from "../support/herald-process.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { behaviours, type Receiver, startReceiver } from "../support/receiver.ts";
import { freshStore } from "../support/store.ts";

// `herald listen --events ... --forward URL` against a real Herald process started with CONTRACT's
// defaults (HERALD_ALLOW_PRIVATE_NETWORKS and HERALD_ALLOW_HTTP_URLS false): every delivery reaches the
// CLI over its own connection to Herald, verified, and is re-POSTed to a local app; each is an attempt in
// the record. A killed CLI makes the next attempts fail (connection_error) and be retried; a restarted
// one takes the session up again and gets them (ADR 29).

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/herald.mjs");

interface Listen {
  child: ChildProcess;
  out(): string;
  exited: Promise<number | null>;
}

const children: ChildProcess[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function until<T>(
  what: string,
  probe: () => Promise<T | null> | T | null,
  ms = PATIENCE_MS,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function setUp(runtime: Runtime) {
  const store = await freshStore(`herald_listen_${runtime}`);
  const server: HeraldProcess = await startHerald({
    runtime,
    env: {
      ...store.env,
      // CONTRACT's defaults, which startHerald otherwise relaxes for its tests.
      HERALD_ALLOW_PRIVATE_NETWORKS: "false",
      HERALD_ALLOW_HTTP_URLS: "false",
      HERALD_RETRY_SCHEDULE: Array(30).fill("1s").join(","),
    },
  });
  cleanups.push(async () => {
    await server.stop();
    await store.cleanup();
  });
  const made = await run(process.execPath, [BIN, "tokens", "create", "--json"], { env: store.env });
  expect(made.code, made.stderr).toBe(0);
  const env = {
    HERALD_URL: server.baseUrl,
    HERALD_TOKEN: (JSON.parse(made.stdout) as { token: string }).token,
  };
  const app: Receiver = await startReceiver({ secrets: [], behaviour: behaviours.status(200, "thanks") });
  cleanups.push(() => app.close());
  const herald = async (...args: string[]) => {
    const r = await run(process.execPath, [BIN, ...args], { env });
    expect(r.code, `herald ${args.join(" ")}: ${r.stderr}`).toBe(0);
    return r.stdout;
  };
  const listen = async (): Promise<Listen & { id: string; secret: string }> => {
    const child = spawn(
      process.execPath,
      [BIN, "listen", "--events", "message.delivered", "--forward", `${app.origin}/hook`],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] },
    );
    children.push(child);
    let out = "";
    child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const secret = await until("listen prints its secret", () => {
      if (child.exitCode !== null) throw new Error(`listen exited:\n${out}`);
      return /^Signing secret .*(whsec_\S+)$/m.exec(out)?.[1] ?? null;
    });
    const id = /^(?:Created|Reusing) endpoint ([0-9a-f-]{36}) → listen:\/\//m.exec(out)![1]!;
    return { child, out: () => out, exited, id, secret };
  };
  const deliveries = async (webhookId: string) =>
    (JSON.parse(await herald("deliveries", "list", webhookId, "--all", "--json")) as { data: unknown[] })
      .data as {
      id: string;
      event_id: string;
      status: string;
      error: string | null;
      response_status: number | null;
      url: string;
      trigger: string;
    }[];
  const send = async () =>
    /^Published \S+ (evt_\w+) /m.exec(await herald("events", "send", "message.delivered"))![1]!;
  return { server, app, herald, listen, deliveries, send };
}

/** The app got this event, and it verifies with `secret` (headers and body as Herald signed them). */
async function forwarded(app: Receiver, eventId: string, secret: string) {
  const [req] = (await app.waitFor((rs) => rs.some((r) => r.body.toString().includes(eventId)))).filter((r) =>
    r.body.toString().includes(eventId),
  );
  await verifyWebhook({ body: new Uint8Array(req!.body), headers: req!.headers, secrets: [secret] });
  return req!;
}

describe("herald listen: a listen session against Herald with its defaults", () => {
  it("receives, verifies and forwards; a killed CLI's attempts fail and are retried to the restarted one", async () => {
    const { app, herald, listen, deliveries, send } = await setUp("node");
    const first = await listen();

    const e1 = await send();
    await forwarded(app, e1, first.secret);
    await until("listen prints the delivery verified and forwarded", () =>
      new RegExp(`✔ verified +message\\.delivered +${e1} .*→ 200 from`).test(first.out()) ? true : null,
    );
    const [d1] = await until("the attempt recorded as succeeded", async () => {
      const ds = await deliveries(first.id);
      return ds.some((d) => d.status === "succeeded") ? ds : null;
    });
    expect(d1).toMatchObject({ event_id: e1, status: "succeeded", response_status: 200 });
    expect(d1!.url).toMatch(/^listen:\/\//);

    // Killed (no Ctrl-C, so the session stays): attempts fail at once and are retried.
    first.child.kill("SIGKILL");
    await first.exited;
    const e2 = await send();
    const failed = await until("two failed attempts of the second event", async () => {
      const ds = (await deliveries(first.id)).filter((d) => d.event_id === e2 && d.status === "failed");
      return ds.length >= 2 ? ds : null;
    });
    expect(failed.every((d) => d.error === "connection_error" && d.response_status === null)).toBe(true);
    expect(app.requests.some((r) => r.body.toString().includes(e2))).toBe(false);

    // Restarted: the same session, a new secret; the retry arrives and verifies with it.
    const second = await listen();
    expect(second.out()).toMatch(new RegExp(`^Reusing endpoint ${first.id} `, "m"));
    await forwarded(app, e2, second.secret);
    await until("the second event's attempt succeeded", async () =>
      (await deliveries(first.id)).some((d) => d.event_id === e2 && d.status === "succeeded") ? true : null,
    );

    // A manual retry goes the same way.
    const before = app.requests.length;
    const ok = (await deliveries(first.id)).find((d) => d.event_id === e1 && d.status === "succeeded")!;
    await herald("deliveries", "retry", ok.id);
    await app.waitFor(before + 1);
    await until("the manual attempt recorded", async () =>
      (await deliveries(first.id)).some((d) => d.trigger === "manual" && d.status === "succeeded")
        ? true
        : null,
    );

    // Ctrl-C deletes the session's endpoint.
    second.child.kill("SIGINT");
    expect(await second.exited).toBe(0);
    expect(second.out()).toMatch(new RegExp(`^Deleted endpoint ${first.id}\\.\\nStopped\\.$`, "m"));
  }, 240_000);

  for (const runtime of testRuntimes()) {
    it(`delivers to a listen session on ${runtime}, and stops at once while one is attached`, async () => {
      const { server, app, listen, deliveries, send } = await setUp(runtime);
      const l = await listen();
      // Longer than Bun's 10 s idle timeout: the heartbeats keep the stream open.
      await new Promise((r) => setTimeout(r, 12_000));
      const e = await send();
      await forwarded(app, e, l.secret);
      await until("the attempt recorded as succeeded", async () =>
        (await deliveries(l.id)).some((d) => d.event_id === e && d.status === "succeeded") ? true : null,
      );
      // An open stream (and listen reconnecting to it) must not hold Herald's stop.
      expect(await server.stop(20_000)).toBe(0);
      expect(server.output()).not.toMatch(/stop did not finish in time/);
      await until("listen sees the connection drop", () =>
        /dropped; reconnecting/.test(l.out()) ? true : null,
      );
      l.child.kill("SIGINT");
      await l.exited;
    }, 180_000);
  }
});
