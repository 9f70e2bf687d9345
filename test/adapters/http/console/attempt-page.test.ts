import { describe, expect, it } from "vitest";
import type { AttemptResult } from "../../../../src/app/ports/deliveries.ts";
import { verifyDelivery } from "../../../support/receiver.ts";
import { makeConsoleHarness } from "./console-harness.ts";

const HOOK = "http://127.0.0.1:9/hook";
type Harness = Awaited<ReturnType<typeof makeConsoleHarness>>;

async function setup(h: Harness, token: string, extra: Record<string, unknown> = {}) {
  const made = await h.api(token, "/webhooks", {
    method: "POST",
    body: JSON.stringify({ url: HOOK, events: ["message.delivered"], ...extra }),
  });
  expect(made.status).toBe(201);
  const endpoint = (await made.json()) as { id: string; secret: string };
  const published = await h.publish(token, {
    // Text whose formatted view differs from its bytes: escapes, non-ASCII and markup.
    metadata: { note: 'café "quoted" <b>&amp;</b> \\ end' },
  });
  expect(published.status).toBe(202);
  const event = (await published.json()) as { id: string };
  const [delivery] = [...h.repos.deliveries.rows.values()].filter((d) => d.eventId === event.id);
  return { endpoint, event, delivery: delivery! };
}

/** Records an attempt as the engine does once the receiver answered. */
function recorded(id: string, ok: boolean, attemptedAt = new Date()): AttemptResult {
  return {
    id,
    status: ok ? "succeeded" : "failed",
    responseStatus: ok ? 200 : 503,
    responseBody: ok ? "ok" : "down",
    error: ok ? null : "http_status",
    durationMs: 12,
    attemptedAt,
    nextAttemptAt: null,
    next: null,
  };
}

/** An open live channel, read as a browser's EventSource would. */
async function openStream(b: Awaited<ReturnType<Harness["signedIn"]>>["b"], path: string) {
  const res = await b.get(path, { Accept: "text/event-stream" });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  const reader = res.body!.getReader();
  let text = "";
  const events = () =>
    text
      .split("\n\n")
      .filter((block) => block.includes("event: delivery"))
      .map((block) => JSON.parse(/^data: ?(.*)$/m.exec(block)![1]!) as { id: string; status: string });
  return {
    /** Reads until an event satisfies `want`; fails when the stream ends first. */
    async until(want: (e: { id: string; status: string }) => boolean) {
      for (;;) {
        const found = events().find(want);
        if (found) return found;
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended:\n${text}`);
        text += new TextDecoder().decode(value);
      }
    },
    events,
    /** Closes it as a browser leaving the page does: the server's loop sees the abort and ends. */
    close() {
      void reader.cancel();
    },
  };
}

describe("console: the attempt page follows its attempt", () => {
  it("after Retry now, the live channel of the page delivers the new attempt's change when it is recorded", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const { delivery } = await setup(h, token);
    await h.repos.deliveries.record([recorded(delivery.id, false)]);

    const retried = await b.post(`/console/deliveries/${delivery.id}/retry`, { _csrf: await b.csrf() });
    expect(retried.status).toBe(303);
    const location = retried.headers.get("location")!;
    const nextId = /\/deliveries\/([0-9a-f-]{36})\?notice=retried$/.exec(location)![1]!;
    const page = await (await b.get(location)).text();
    expect(page).toContain("Retry queued");
    // The page names its channel, and what it shows of each attempt, for the script to compare.
    const follow = /data-follow="([^"]+)"/.exec(page)?.[1];
    expect(follow).toBe(`/console/live/stream?delivery=${nextId}`);
    expect(page).toContain(`data-attempt="${nextId}" data-state="pending "`);
    expect(page).toMatch(new RegExp(`data-attempt="${delivery.id}" data-state="failed \\d{4}-`));

    const stream = await openStream(b, follow!);
    await stream.until((e) => e.id === nextId && e.status === "pending");
    // Another event's attempt, recorded meanwhile, is not this page's.
    const other = await setup(h, token);
    const attemptedAt = new Date();
    await h.repos.deliveries.record([recorded(other.delivery.id, true), recorded(nextId, true, attemptedAt)]);
    const changed = await stream.until((e) => e.id === nextId && e.status === "succeeded");
    stream.close();
    expect(changed).toMatchObject({
      id: nextId,
      status: "succeeded",
      response_status: 200,
      attempt: 2,
      trigger: "manual",
      attempted_at: attemptedAt.toISOString(),
    });
    expect(stream.events().some((e) => e.id === other.delivery.id)).toBe(false);

    // Once nothing it shows is pending, the page no longer listens.
    const settled = await (await b.get(`/console/deliveries/${nextId}`)).text();
    expect(settled).not.toContain("data-follow");
    expect(settled).toContain(`data-state="succeeded ${attemptedAt.toISOString()}"`);
  });

  it("keeps another project's attempt off its channel (404), as its page", async () => {
    const h = await makeConsoleHarness();
    const a = await h.signedIn();
    const { delivery } = await setup(h, a.token);
    const other = await h.signedIn();
    expect((await other.b.get(`/console/live/stream?delivery=${delivery.id}`)).status).toBe(404);
    expect((await other.b.get("/console/live/stream?delivery=not-an-id")).status).toBe(404);
    expect((await other.b.get(`/console/deliveries/${delivery.id}`)).status).toBe(404);
  });
});

describe("console: the request sent", () => {
  it("shows the body byte for byte as sent, beside a formatted view, with a signature that verifies over it", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const { endpoint, event, delivery } = await setup(h, token);
    const attemptedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
    await h.repos.deliveries.record([recorded(delivery.id, true, attemptedAt)]);
    const body = (await h.repos.events.getMany([event.id]))[0]!.body;

    const page = await (await b.get(`/console/deliveries/${delivery.id}`)).text();
    const shown = /<pre class="code raw" id="request-body" data-raw[^>]*>([\s\S]*?)<\/pre>/.exec(page)?.[1];
    expect(shown).toBeDefined();
    // The HTML parser drops the one newline right after <pre>; the rest is the body, escaped.
    expect(shown!.startsWith("\n")).toBe(true);
    const raw = unescapeHtml(shown!.slice(1));
    expect(raw).toBe(body);
    const bytes = new TextEncoder().encode(body).length;
    expect(page).toContain(`Body, exactly as sent: <strong>${bytes}</strong> bytes`);
    expect(page).toContain("Formatted view");
    expect(page).toContain(escapeHtml(JSON.stringify(JSON.parse(body), null, 2)));

    const head = unescapeHtml(/<pre class="code" id="request-head"[^>]*>([\s\S]*?)<\/pre>/.exec(page)![1]!);
    const headers = new Map(
      head
        .split("\n")
        .slice(1)
        .map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 2)] as const),
    );
    expect(head.split("\n")[0]).toBe(`POST ${HOOK}`);
    expect(headers.get("X-Webhook-Timestamp")).toBe(String(attemptedAt.getTime() / 1000));
    const verdict = verifyDelivery(
      {
        "x-webhook-timestamp": headers.get("X-Webhook-Timestamp"),
        "x-webhook-signature": headers.get("X-Webhook-Signature"),
      },
      Buffer.from(raw, "utf8"),
      [endpoint.secret],
      attemptedAt.getTime() / 1000,
    );
    expect(verdict).toMatchObject({ ok: true });
  });

  it("says the record does not tell which scheme and custom headers were in force, and when the endpoint changed since", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const { endpoint, delivery } = await setup(h, token, { headers: { "X-Route": "a" } });
    // Attempted after the endpoint was made; the endpoint is changed later still.
    await h.repos.deliveries.record([recorded(delivery.id, true, new Date(Date.now() + 1_000))]);
    const before = await (await b.get(`/console/deliveries/${delivery.id}`)).text();
    expect(before).toContain(
      "The record does not say which signature scheme and custom headers were in force for this attempt",
    );
    expect(before).not.toContain("This endpoint was changed after this attempt");
    h.advance(10_000);
    const patched = await h.api(token, `/webhooks/${endpoint.id}`, {
      method: "PATCH",
      body: JSON.stringify({ signature_scheme: "standard-webhooks", headers: { "X-Other": "b" } }),
    });
    expect(patched.status).toBe(200);
    const after = await (await b.get(`/console/deliveries/${delivery.id}`)).text();
    expect(after).toContain("This endpoint was changed after this attempt");
    expect(after).toContain("webhook-signature: ");
  });
});

const escapeHtml = (s: string) =>
  s
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");

function unescapeHtml(s: string): string {
  return s
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&amp;", "&");
}
