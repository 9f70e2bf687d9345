import { afterEach, describe, expect, it, vi } from "vitest";
import { verifyWebhook } from "../../../clients/typescript/verify.ts";
import { withListenSessions } from "../../../src/adapters/listen/sender.ts";
import { createListenSessions, type ListenSink, sseFrame } from "../../../src/adapters/listen/sessions.ts";
import { listenStream } from "../../../src/adapters/listen/stream.ts";
import type { DeliveryRequest, Sender } from "../../../src/app/ports/sending.ts";
import { answerOf, sseEvents } from "../../../src/cli/listen-session.ts";
import { listenSessionKey, listenUrl } from "../../../src/domain/listen-url.ts";
import { delivery, SECRET } from "../delivery/helpers.ts";

const KEY = "6ab9217c-aefe-4fcb-b398-ca34f244f7be";
const OWNER = "tenant/project";

/** A sink that keeps what was pushed, parsed back from its frames. */
function recordingSink() {
  const frames: string[] = [];
  let ended = false;
  const sink: ListenSink = { push: (f) => frames.push(f), end: () => (ended = true) };
  const deliveries = () =>
    frames
      .filter((f) => f.startsWith("event: delivery\n"))
      .map(
        (f) =>
          JSON.parse(f.split("\n")[1]!.slice("data: ".length)) as {
            id: string;
            headers: Record<string, string>;
            body: string;
          },
      );
  return { sink, frames, deliveries, ended: () => ended };
}

afterEach(() => vi.useRealTimers());

describe("listen URLs", () => {
  it("name a session key, and only listen:// URLs with a uuid do", () => {
    expect(listenSessionKey(listenUrl(KEY))).toBe(KEY);
    expect(listenSessionKey(`https://example.com/${KEY}`)).toBeNull();
    expect(listenSessionKey("listen://not-a-key")).toBeNull();
  });
});

describe("listen sessions", () => {
  it("deliver to the attached stream and resolve with the answer of that message", async () => {
    const sessions = createListenSessions();
    const r = recordingSink();
    sessions.attach(KEY, OWNER, r.sink);
    const result = sessions.deliver(KEY, { headers: { "X-A": "1" }, body: '{"x":"é"}' }, 5_000);
    const [sent] = r.deliveries();
    expect(sent).toMatchObject({ headers: { "X-A": "1" }, body: '{"x":"é"}' });
    expect(sessions.answer(KEY, "other/project", sent!.id, { status: 200, body: null })).toBe(false);
    expect(
      sessions.answer(KEY, OWNER, "00000000-0000-4000-8000-000000000000", { status: 200, body: null }),
    ).toBe(false);
    expect(sessions.answer(KEY, OWNER, sent!.id, { status: 204, body: "ok" })).toBe(true);
    await expect(result).resolves.toEqual({ answer: { status: 204, body: "ok" } });
    // Answered once: a second answer finds nothing waiting.
    expect(sessions.answer(KEY, OWNER, sent!.id, { status: 200, body: null })).toBe(false);
  });

  it("fail at once without a stream, and time out without an answer", async () => {
    vi.useFakeTimers();
    const sessions = createListenSessions();
    await expect(sessions.deliver(KEY, { headers: {}, body: "{}" }, 1_000)).resolves.toEqual({
      error: "no_session",
    });
    sessions.attach(KEY, OWNER, recordingSink().sink);
    const result = sessions.deliver(KEY, { headers: {}, body: "{}" }, 1_000);
    await vi.advanceTimersByTimeAsync(1_001);
    await expect(result).resolves.toEqual({ error: "timeout" });
  });

  it("hold one stream per session; detaching fails what waits on it, and frees the session", async () => {
    const sessions = createListenSessions();
    const first = recordingSink();
    const detach = sessions.attach(KEY, OWNER, first.sink);
    expect(detach).not.toBeNull();
    expect(sessions.attach(KEY, OWNER, recordingSink().sink)).toBeNull();
    const waiting = sessions.deliver(KEY, { headers: {}, body: "{}" }, 60_000);
    detach!();
    await expect(waiting).resolves.toEqual({ error: "closed" });
    expect(sessions.isOpen(KEY)).toBe(false);
    expect(sessions.attach(KEY, OWNER, recordingSink().sink)).not.toBeNull();
  });

  it("close ends every stream, fails what waits and refuses new streams", async () => {
    const sessions = createListenSessions();
    const r = recordingSink();
    sessions.attach(KEY, OWNER, r.sink);
    const waiting = sessions.deliver(KEY, { headers: {}, body: "{}" }, 60_000);
    sessions.close();
    expect(r.ended()).toBe(true);
    await expect(waiting).resolves.toEqual({ error: "closed" });
    expect(sessions.attach(KEY, OWNER, recordingSink().sink)).toBeNull();
    // No stream is opened while Herald stops: it would hold the server open.
    expect(sessions.isClosed()).toBe(true);
    expect(listenStream(sessions, KEY, OWNER, {})).toBeNull();
  });
});

describe("the stream", () => {
  it("frames ready, deliveries and heartbeats as server-sent events the CLI's parser reads back", async () => {
    const sessions = createListenSessions();
    const stream = listenStream(sessions, KEY, OWNER, { webhook_id: "w" }, 20);
    expect(stream).not.toBeNull();
    expect(listenStream(sessions, KEY, OWNER, {}, 20)).toBeNull();
    const body = 'line "one"\nline two ✓';
    const result = sessions.deliver(KEY, { headers: { "X-Webhook-Id": "evt_1" }, body }, 5_000);
    await new Promise((r) => setTimeout(r, 50)); // at least one heartbeat comment in between
    const events = sseEvents(stream!);
    expect(await events.next()).toEqual({
      done: false,
      value: { event: "ready", data: '{"webhook_id":"w"}' },
    });
    const d = (await events.next()).value as { event: string; data: string };
    expect(d.event).toBe("delivery");
    const parsed = JSON.parse(d.data) as { id: string; body: string };
    expect(parsed.body).toBe(body);
    sessions.answer(KEY, OWNER, parsed.id, { status: 200, body: null });
    await expect(result).resolves.toMatchObject({ answer: { status: 200 } });
    sessions.close();
    expect((await events.next()).done).toBe(true);
  });

  it("detaches when the client goes away (the runtime cancels the body)", async () => {
    const sessions = createListenSessions();
    const stream = listenStream(sessions, KEY, OWNER, {});
    expect(sessions.isOpen(KEY)).toBe(true);
    await stream!.cancel();
    expect(sessions.isOpen(KEY)).toBe(false);
  });

  it("sseFrame writes one data line whatever the body holds", () => {
    expect(sseFrame("delivery", { body: "a\nb\r\n" })).toBe(
      'event: delivery\ndata: {"body":"a\\nb\\r\\n"}\n\n',
    );
  });
});

describe("the listen sender", () => {
  const http = (): Sender & { sent: DeliveryRequest[]; closed: boolean } => {
    const h = {
      sent: [] as DeliveryRequest[],
      closed: false,
      async send(req: DeliveryRequest) {
        h.sent.push(req);
        return {
          ok: true,
          responseStatus: 200,
          responseBody: "",
          error: null,
          durationMs: 1,
          retryAfterMs: null,
        };
      },
      async close() {
        h.closed = true;
      },
    };
    return h;
  };

  it("sends https URLs over HTTP and listen:// URLs to the session, signed as HTTP would sign them", async () => {
    const sessions = createListenSessions();
    const h = http();
    const sender = withListenSessions(sessions, h, { timeoutMs: 5_000, userAgent: "Herald/test" });
    await sender.send(delivery("https://example.com/h"));
    expect(h.sent.map((r) => r.url)).toEqual(["https://example.com/h"]);

    const r = recordingSink();
    sessions.attach(KEY, OWNER, r.sink);
    const envelope = {
      id: "evt_1",
      type: "message.delivered",
      version: "1",
      occurred_at: new Date().toISOString(),
      tenant_id: "t",
      project_id: "p",
      resource_id: "r",
      data: { note: "héllo ✓" },
    };
    const req = delivery(listenUrl(KEY), { body: JSON.stringify(envelope) });
    const outcome = sender.send(req);
    await vi.waitFor(() => expect(r.deliveries()).toHaveLength(1));
    const [sent] = r.deliveries();
    expect(sent!.body).toBe(req.body);
    expect(sent!.headers["User-Agent"]).toBe("Herald/test");
    await verifyWebhook({ body: sent!.body, headers: sent!.headers, secrets: [SECRET] });
    sessions.answer(KEY, OWNER, sent!.id, { status: 503, body: "down" });
    await expect(outcome).resolves.toMatchObject({
      ok: false,
      responseStatus: 503,
      responseBody: "down",
      error: "http_status",
    });
    expect(h.sent).toHaveLength(1);
  });

  it("reports no stream as connection_error and no answer as timeout", async () => {
    const sessions = createListenSessions();
    const sender = withListenSessions(sessions, http(), { timeoutMs: 30, userAgent: "Herald/test" });
    await expect(sender.send(delivery(listenUrl(KEY)))).resolves.toMatchObject({
      ok: false,
      error: "connection_error",
      responseStatus: null,
    });
    sessions.attach(KEY, OWNER, recordingSink().sink);
    await expect(sender.send(delivery(listenUrl(KEY)))).resolves.toMatchObject({
      ok: false,
      error: "timeout",
    });
  });

  it("close ends the sessions and closes the HTTP sender", async () => {
    const sessions = createListenSessions();
    const h = http();
    const r = recordingSink();
    sessions.attach(KEY, OWNER, r.sink);
    await withListenSessions(sessions, h, { timeoutMs: 30, userAgent: "x" }).close();
    expect([r.ended(), h.closed]).toEqual([true, true]);
  });
});

describe("the CLI's answer", () => {
  const record = (over: object) =>
    ({ answered: 200, reason: null, forward: null, ...over }) as Parameters<typeof answerOf>[0];
  it("is the forward target's status, 502 when forwarding failed, 400 for a rejected delivery, else 200", () => {
    expect(answerOf(record({ forward: { url: "http://a/", status: 201, error: null } })).status).toBe(201);
    expect(answerOf(record({ forward: { url: "http://a/", status: null, error: "ECONNREFUSED" } }))).toEqual({
      status: 502,
      body: "herald listen: forwarding to http://a/ failed (ECONNREFUSED)",
    });
    expect(answerOf(record({ answered: 400, reason: "signature_mismatch" }))).toEqual({
      status: 400,
      body: "signature_mismatch",
    });
    expect(answerOf(record({})).status).toBe(200);
  });
});
