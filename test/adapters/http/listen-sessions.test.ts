import { beforeEach, describe, expect, it } from "vitest";
import { createListenSessions, type ListenSessions } from "../../../src/adapters/listen/sessions.ts";
import { sseEvents } from "../../../src/cli/listen-session.ts";
import { listenSessionKey } from "../../../src/domain/listen-url.ts";
import { type ApiHarness, makeApiHarness } from "../../support/api-harness.ts";

// The listen-session routes (ADR 29): auth, CONTRACT §3 errors for bad ids and bodies (never a 500),
// one stream per session, answers settling the waiting delivery, and no secret in any log line.

let h: ApiHarness;
let sessions: ListenSessions;
let token: string;

beforeEach(async () => {
  sessions = createListenSessions();
  h = await makeApiHarness({ override: () => ({ listen: sessions }) });
  token = (await h.newToken()).token;
});

const call = (method: string, path: string, body?: unknown, t: string | null = token) =>
  h.fetch(
    new Request(`${h.baseUrl}/api/v1${path}`, {
      method,
      headers: {
        ...(t ? { Authorization: `Bearer ${t}` } : {}),
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      },
      body: body === undefined ? null : JSON.stringify(body),
    }),
  );

async function problem(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  const doc = (await res.json()) as { code: string; errors?: { path: string }[] };
  expect(doc.code).toBe(code);
  return doc;
}

async function create(events = ["message.delivered"]) {
  const res = await call("POST", "/listen-sessions", { events });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; url: string; secret: string; events: string[] };
}

describe("POST /listen-sessions", () => {
  it("registers a listen:// endpoint with its secret, which the webhooks API lists like any other", async () => {
    const s = await create(["message.delivered", "message.bounced"]);
    expect(listenSessionKey(s.url)).not.toBeNull();
    expect(s.secret).toMatch(/^whsec_/);
    const got = await call("GET", `/webhooks/${s.id}`);
    expect(await got.json()).toMatchObject({
      id: s.id,
      url: s.url,
      events: ["message.delivered", "message.bounced"],
    });
  });

  it("is the only way to a listen:// URL: the webhooks API refuses the scheme", async () => {
    const s = await create();
    const doc = await problem(
      await call("POST", "/webhooks", { url: s.url, events: ["message.delivered"] }),
      422,
      "validation_failed",
    );
    expect(doc.errors?.[0]?.path).toBe("body.url");
    const other = await create();
    await problem(await call("PATCH", `/webhooks/${other.id}`, { url: s.url }), 422, "validation_failed");
    const w = await call("POST", "/webhooks", {
      url: "https://hooks.example.com/h",
      events: ["message.delivered"],
    });
    const { id } = (await w.json()) as { id: string };
    await problem(await call("PATCH", `/webhooks/${id}`, { url: s.url }), 422, "validation_failed");
    // Its own URL sent back unchanged (as the console's form does) is no change.
    const same = await call("PATCH", `/webhooks/${s.id}`, { url: s.url, events: ["message.bounced"] });
    expect(same.status).toBe(200);
    expect(await same.json()).toMatchObject({ url: s.url, events: ["message.bounced"] });
  });

  it("answers 401 without a token and 422 for bad events", async () => {
    await problem(
      await call("POST", "/listen-sessions", { events: ["message.delivered"] }, null),
      401,
      "unauthorized",
    );
    await problem(await call("POST", "/listen-sessions", { events: ["no.such"] }), 422, "validation_failed");
    await problem(await call("POST", "/listen-sessions", { events: [], extra: 1 }), 422, "validation_failed");
  });
});

describe("GET /listen-sessions/{id}/stream", () => {
  it("streams ready, then each delivery, to the token's project only", async () => {
    const s = await create();
    const res = await call("GET", `/listen-sessions/${s.id}/stream`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = sseEvents(res.body!);
    expect((await events.next()).value).toEqual({
      event: "ready",
      data: JSON.stringify({ webhook_id: s.id }),
    });
    const key = listenSessionKey(s.url)!;
    const waiting = sessions.deliver(key, { headers: { "X-Webhook-Id": "evt_1" }, body: '{"a":1}' }, 10_000);
    const frame = (await events.next()).value as { event: string; data: string };
    expect(frame.event).toBe("delivery");
    const { id } = JSON.parse(frame.data) as { id: string };

    // Another project's token sees neither the session nor its deliveries.
    const other = (await h.newToken()).token;
    await problem(await call("GET", `/listen-sessions/${s.id}/stream`, undefined, other), 404, "not_found");
    await problem(
      await call("POST", `/listen-sessions/${s.id}/answers`, { message_id: id, status: 200 }, other),
      404,
      "not_found",
    );

    expect(
      (await call("POST", `/listen-sessions/${s.id}/answers`, { message_id: id, status: 200, body: "ok" }))
        .status,
    ).toBe(204);
    await expect(waiting).resolves.toEqual({ answer: { status: 200, body: "ok" } });
    // Answered: nothing waits for that id any more.
    await problem(
      await call("POST", `/listen-sessions/${s.id}/answers`, { message_id: id, status: 200 }),
      404,
      "not_found",
    );
    await events.return(undefined);
    expect(sessions.isOpen(key)).toBe(false);
  });

  it("answers 409 to a second stream and for an endpoint that delivers to a URL", async () => {
    const s = await create();
    const first = await call("GET", `/listen-sessions/${s.id}/stream`);
    expect(first.status).toBe(200);
    await problem(await call("GET", `/listen-sessions/${s.id}/stream`), 409, "conflict");
    await first.body!.cancel();
    const w = await call("POST", "/webhooks", {
      url: "https://hooks.example.com/h",
      events: ["message.delivered"],
    });
    const { id } = (await w.json()) as { id: string };
    await problem(await call("GET", `/listen-sessions/${id}/stream`), 409, "conflict");
  });

  it("answers 503 once Herald is stopping (its streams ended)", async () => {
    const s = await create();
    sessions.close();
    await problem(await call("GET", `/listen-sessions/${s.id}/stream`), 503, "unavailable");
  });

  it("answers 401 without a token, and 404 for an unknown id and a malformed one (as every path id)", async () => {
    await problem(
      await call("GET", "/listen-sessions/00000000-0000-4000-8000-000000000000/stream", undefined, null),
      401,
      "unauthorized",
    );
    await problem(
      await call("GET", "/listen-sessions/00000000-0000-4000-8000-000000000000/stream"),
      404,
      "not_found",
    );
    await problem(await call("GET", "/listen-sessions/not-a-uuid/stream"), 404, "not_found");
  });
});

describe("POST /listen-sessions/{id}/answers", () => {
  it("answers 422 for a bad answer, 404 when nothing waits, 401 without a token", async () => {
    const s = await create();
    const path = `/listen-sessions/${s.id}/answers`;
    const mid = "00000000-0000-4000-8000-000000000000";
    await problem(await call("POST", path, { message_id: mid, status: 99 }), 422, "validation_failed");
    await problem(await call("POST", path, { message_id: "x", status: 200 }), 422, "validation_failed");
    await problem(
      await call("POST", path, { message_id: mid, status: 200, body: "x".repeat(4097) }),
      422,
      "validation_failed",
    );
    await problem(await call("POST", path, { status: 200 }), 422, "validation_failed");
    await problem(await call("POST", path, { message_id: mid, status: 200 }), 404, "not_found");
    await problem(await call("POST", path, { message_id: mid, status: 200 }, null), 401, "unauthorized");
  });
});

describe("secrets", () => {
  it("never reach a log line, and a server without sessions answers 404, not 500", async () => {
    const s = await create();
    const res = await call("GET", `/listen-sessions/${s.id}/stream`);
    await res.body!.cancel();
    expect(h.logLines.join("\n")).not.toContain(s.secret);
    expect(h.logLines.join("\n")).not.toContain(token);

    const bare = await makeApiHarness();
    const t = (await bare.newToken()).token;
    const r = await bare.fetch(
      new Request(`${bare.baseUrl}/api/v1/listen-sessions`, {
        method: "POST",
        headers: { Authorization: `Bearer ${t}`, "Content-Type": "application/json" },
        body: JSON.stringify({ events: ["message.delivered"] }),
      }),
    );
    await problem(r, 404, "not_found");
  });
});
