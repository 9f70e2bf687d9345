import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import { signatureHeader } from "../../src/domain/signing.ts";
import { cliHarness, recordingIo } from "./helpers.ts";

const SECRET = `whsec_${btoa("k".repeat(32))}`;
const OTHER_SECRET = `whsec_${btoa("o".repeat(32))}`;

function envelope(type = "message.delivered") {
  return {
    id: `evt_${crypto.randomUUID().replaceAll("-", "")}`,
    type,
    version: "1",
    occurred_at: new Date(Date.now() - 2_000).toISOString(),
    tenant_id: crypto.randomUUID(),
    project_id: crypto.randomUUID(),
    resource_id: crypto.randomUUID(),
    data: { status: "delivered", note: "ünïcode ✓" },
  };
}

/** A delivery as Herald sends it: raw body, timestamp, signature(s) under the given secrets. */
async function signed(secrets: string[], body: string, timestamp = Math.floor(Date.now() / 1000)) {
  const id = (JSON.parse(body) as { id: string }).id;
  return {
    "Content-Type": "application/json",
    "User-Agent": "Herald/0.1.0",
    "X-Webhook-Id": id,
    "X-Webhook-Timestamp": String(timestamp),
    "X-Webhook-Signature": await signatureHeader(secrets, timestamp, body),
  };
}

interface Running {
  url: string;
  rec: ReturnType<typeof recordingIo>;
  done: Promise<number>;
  stop(): Promise<number>;
}

const running: Running[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

async function listen(args: string[], env: Record<string, string> = {}): Promise<Running> {
  const rec = recordingIo(env);
  const controller = new AbortController();
  const done = runCli(["listen", "--port", "0", ...args], rec.io, { signal: controller.signal });
  const started = args.includes("--json")
    ? rec.waitForErr(/^Listening on /)
    : rec.waitForOut(/^Listening on /);
  const banner = await Promise.race([started, done.then(() => null)]);
  if (!banner) throw new Error(`listen did not start: ${rec.err.join("\n")}`);
  const r: Running = {
    url: banner.slice("Listening on ".length),
    rec,
    done,
    stop: async () => {
      controller.abort();
      return done;
    },
  };
  running.push(r);
  return r;
}

async function post(url: string, body: string, headers: Record<string, string>) {
  const res = await fetch(url, { method: "POST", body, headers });
  return { status: res.status, text: await res.text() };
}

describe("herald listen", () => {
  it("prints where it listens and how to register it", async () => {
    const r = await listen(["--secret", SECRET]);
    expect(r.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const text = r.rec.out.join("\n");
    expect(text).toContain(`npx herald webhooks create --url ${r.url} --events`);
    expect(text).toContain("HERALD_ALLOW_HTTP_URLS=true HERALD_ALLOW_PRIVATE_NETWORKS=true npm start");
    expect(text).toContain("Verifying with 1 secret.");
  });

  it("verifies a correctly signed delivery and flags a tampered one, answering 200 to both", async () => {
    const r = await listen(["--secret", SECRET]);
    const good = envelope("message.bounced");
    const body = JSON.stringify(good);
    const ok = await post(r.url, body, await signed([SECRET], body));
    expect(ok.status).toBe(200);
    const tamperedBody = body.replace("delivered", "bounced!!");
    const bad = await post(r.url, tamperedBody, await signed([SECRET], body));
    expect(bad.status).toBe(200);
    const lines = r.rec.out.filter((l) => /^\d\d:\d\d:\d\d /.test(l));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      new RegExp(
        `^\\d\\d:\\d\\d:\\d\\d  ✔ verified +message\\.bounced +${good.id}  latency -?\\d+(ms|\\.\\ds)  age \\d\\.\\ds$`,
      ),
    );
    expect(lines[1]).toMatch(new RegExp(`✘ signature_mismatch +message\\.bounced +${good.id}  latency `));
    expect(lines[1]).not.toContain("answered");
  });

  it("accepts either secret while rotating, reads HERALD_WEBHOOK_SECRET, and reports stale timestamps", async () => {
    const r = await listen([], { HERALD_WEBHOOK_SECRET: `${OTHER_SECRET},${SECRET}` });
    expect(r.rec.out.join("\n")).toContain("Verifying with 2 secrets.");
    const e = envelope();
    const body = JSON.stringify(e);
    await post(r.url, body, await signed([SECRET], body));
    await post(r.url, body, await signed([OTHER_SECRET], body, Math.floor(Date.now() / 1000) - 3600));
    const lines = r.rec.out.filter((l) => /^\d\d:\d\d:\d\d /.test(l));
    expect(lines[0]).toContain("✔ verified");
    expect(lines[1]).toContain("✘ timestamp_out_of_tolerance");
    expect(lines[1]).toMatch(/latency 1\.0h|latency 3600\.\ds|latency 36\d\d\.\ds/);
  });

  it("--reject-invalid answers 400 with the reason; --json prints one object per delivery", async () => {
    const r = await listen(["--secret", SECRET, "--reject-invalid", "--json"]);
    const e = envelope("domain.verified");
    const body = JSON.stringify(e);
    const ok = await post(r.url, body, await signed([SECRET], body));
    expect(ok).toEqual({ status: 200, text: "ok\n" });
    const wrong = await post(r.url, body, await signed([OTHER_SECRET], body));
    expect(wrong).toEqual({ status: 400, text: "signature_mismatch\n" });
    const unsigned = await post(r.url, body, { "Content-Type": "application/json" });
    expect(unsigned).toEqual({ status: 400, text: "missing_timestamp\n" });
    expect(r.rec.out).toHaveLength(3);
    const records = r.rec.out.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records[0]).toMatchObject({
      verified: true,
      reason: null,
      event_type: "domain.verified",
      event_id: e.id,
      answered: 200,
      forward: null,
      event: e,
    });
    expect(records[0]!.latency_ms).toBeTypeOf("number");
    expect(records[0]!.age_ms as number).toBeGreaterThanOrEqual(2_000);
    expect(records[1]).toMatchObject({ verified: false, reason: "signature_mismatch", answered: 400 });
    expect(records[2]).toMatchObject({ verified: false, reason: "missing_timestamp", latency_ms: null });
  });

  it("without a secret prints deliveries as unverified", async () => {
    const r = await listen([]);
    expect(r.rec.out.join("\n")).toContain("No secret: deliveries are printed but not verified");
    const body = JSON.stringify(envelope());
    expect((await post(r.url, body, await signed([SECRET], body))).status).toBe(200);
    expect(r.rec.out.at(-1)).toContain("? unverified (no secret)");
  });

  it("--forward re-POSTs the raw body and the signature headers to a local app and prints its status", async () => {
    const received: { body: Buffer; headers: IncomingHttpHeaders; method?: string }[] = [];
    const app = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({ body: Buffer.concat(chunks), headers: req.headers, method: req.method });
        res.writeHead(received.length === 1 ? 204 : 500).end();
      });
    });
    await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
    try {
      const appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/hooks`;
      const r = await listen(["--secret", SECRET, "--forward", appUrl]);
      // Odd spacing and non-ASCII: the bytes must arrive exactly as Herald sent them.
      const body = JSON.stringify(envelope(), null, 1);
      const headers = await signed([SECRET], body);
      expect((await post(r.url, body, headers)).status).toBe(200);
      expect((await post(r.url, body, headers)).status).toBe(200);

      expect(received).toHaveLength(2);
      const [first] = received;
      expect(first!.method).toBe("POST");
      expect(first!.body.equals(Buffer.from(body, "utf8"))).toBe(true);
      expect(first!.headers).toMatchObject({
        "content-type": "application/json",
        "user-agent": "Herald/0.1.0",
        "x-webhook-id": headers["X-Webhook-Id"],
        "x-webhook-timestamp": headers["X-Webhook-Timestamp"],
        "x-webhook-signature": headers["X-Webhook-Signature"],
      });
      const lines = r.rec.out.filter((l) => /^\d\d:\d\d:\d\d /.test(l));
      expect(lines[0]).toContain(`✔ verified`);
      expect(lines[0]).toMatch(new RegExp(`→ 204 from ${appUrl}$`));
      expect(lines[1]).toMatch(new RegExp(`→ 500 from ${appUrl}$`));
    } finally {
      await new Promise((resolve) => app.close(resolve));
    }
  });

  it("reports a forward target that is down", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const r = await listen(["--forward", `http://127.0.0.1:${port}/`]);
    const body = JSON.stringify(envelope());
    expect((await post(r.url, body, await signed([SECRET], body))).status).toBe(200);
    expect(r.rec.out.at(-1)).toMatch(/→ failed \(ECONNREFUSED\) from http:\/\/127\.0\.0\.1:\d+\/$/);
  });

  it("stops cleanly when asked, and frees the port", async () => {
    const r = await listen([]);
    expect(await r.stop()).toBe(0);
    expect(r.rec.out.at(-1)).toBe("Stopped.");
    await expect(fetch(r.url, { method: "POST", body: "{}" })).rejects.toThrow();
  });

  it("refuses bad options with exit 2", async () => {
    for (const args of [
      ["--port", "70000"],
      ["--secret", "not-a-secret"],
      ["--forward", "ftp://example.com/"],
      ["--reject-invalid"],
      ["--keep"],
      ["--events", ","],
      ["--bogus"],
    ]) {
      const rec = recordingIo();
      expect(await runCli(["listen", ...args], rec.io), args.join(" ")).toBe(2);
      expect(rec.err, args.join(" ")).toHaveLength(1);
      expect(rec.err[0]).toMatch(/^herald: .+; see npx herald listen --help$/);
    }
  });

  it("says so when the port is taken", async () => {
    const r = await listen([]);
    const port = new URL(r.url).port;
    const rec = recordingIo();
    expect(await runCli(["listen", "--port", port], rec.io)).toBe(1);
    expect(rec.err).toEqual([
      `herald: port ${port} on 127.0.0.1 is in use; pass --port N (0 picks a free one)`,
    ]);
  });

  it("--events explains what Herald must allow when it refuses an http://127.0.0.1 endpoint, and frees the port", async () => {
    const cli = await cliHarness({ allowHttpUrls: false });
    const rec = recordingIo(cli.env);
    const port = String(await freePortForListen());
    const code = await runCli(["listen", "--port", port, "--events", "message.delivered"], rec.io, {
      fetch: cli.api.fetch,
    });
    expect(code).toBe(1);
    expect(rec.err.join("\n")).toMatch(/^herald: 422 validation_failed: .*url/);
    expect(rec.err.join("\n")).toContain(
      "start Herald with HERALD_ALLOW_HTTP_URLS=true HERALD_ALLOW_PRIVATE_NETWORKS=true",
    );
    expect(rec.out.some((l) => l.startsWith("Listening on"))).toBe(false);
    await expect(fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: "{}" })).rejects.toThrow();
  });

  it("--events needs HERALD_TOKEN (exit 2, one line)", async () => {
    const rec = recordingIo({});
    expect(await runCli(["listen", "--port", "0", "--events", "message.delivered"], rec.io)).toBe(2);
    expect(rec.err).toHaveLength(1);
    expect(rec.err[0]).toMatch(/^herald: HERALD_TOKEN is not set/);
  });
});

/** A port nothing listens on (the listener is closed again at once). */
function freePortForListen(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
