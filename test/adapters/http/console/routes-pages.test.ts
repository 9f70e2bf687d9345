import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { PATIENCE_MS } from "../../../support/patience.ts";
import { makeConsoleHarness } from "./console-harness.ts";
import { createEndpoint, HOOK, publish } from "./routes-support.ts";

// The console's pages and actions through the use cases (endpoints, deliveries, events), and its live stream.

describe("console: pages and actions through the use cases", () => {
  it("creates an endpoint from the form and shows its secret once; the endpoint page never shows it", async () => {
    const h = await makeConsoleHarness();
    const { b } = await h.signedIn();
    const created = await b.post("/console/endpoints", {
      _csrf: await b.csrf(),
      url: HOOK,
      description: "orders",
      events: ["message.delivered", "domain.verified"],
    });
    expect(created.status).toBe(303);
    const shown = await b.follow(created);
    expect(shown.status).toBe(200);
    expect(shown.headers.get("cache-control")).toBe("no-store");
    const html = await shown.text();
    const secret = /whsec_[A-Za-z0-9+/=]+/.exec(html)?.[0];
    expect(secret).toBeDefined();
    const id = /\/console\/endpoints\/([0-9a-f-]{36})/.exec(html)?.[1];
    const page = await (await b.get(`/console/endpoints/${id}`)).text();
    expect(page).toContain(HOOK);
    expect(page).not.toContain("whsec_");
    const overview = await (await b.get("/console")).text();
    expect(overview).toContain(HOOK);
    expect(overview).not.toContain("whsec_");
  });

  it("says what is wrong with a bad form in the API's words", async () => {
    const h = await makeConsoleHarness();
    const { b } = await h.signedIn();
    const res = await b.post("/console/endpoints", {
      _csrf: await b.csrf(),
      url: "ftp://x",
      events: "message.delivered",
    });
    expect(res.status).toBe(422);
    expect(await res.text()).toMatch(/url: must/);
    const none = await b.post("/console/endpoints", { _csrf: await b.csrf(), url: HOOK });
    expect(none.status).toBe(422);
    expect(await none.text()).toContain("tick at least one event type");
  });

  it("lists deliveries across endpoints and per endpoint, filters them, shows one with its request, and retries it", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const e1 = await createEndpoint(h, token);
    const e2 = await createEndpoint(h, token, ["message.delivered", "domain.verified"]);
    const evt = await publish(h, token);
    const all = await (await b.get("/console/deliveries")).text();
    expect(all.match(/<tr data-id=/g)).toHaveLength(2);
    const one = await (await b.get(`/console/deliveries?webhook_id=${e1.id}`)).text();
    expect(one.match(/<tr data-id=/g)).toHaveLength(1);
    const none = await (await b.get("/console/deliveries?status=succeeded")).text();
    expect(none).toContain("No deliveries match these filters");
    const byEvent = await (await b.get(`/console/deliveries?event_id=${evt.id}&status=pending`)).text();
    expect(byEvent.match(/<tr data-id=/g)).toHaveLength(2);

    const id = /data-id="([0-9a-f-]{36})"/.exec(one)?.[1] ?? "";
    const detail = await (await b.get(`/console/deliveries/${id}`)).text();
    expect(detail).toContain("Every attempt of this event to this endpoint");
    expect(detail).not.toContain(e1.secret);

    const retried = await b.post(`/console/deliveries/${id}/retry`, { _csrf: await b.csrf() });
    expect(retried.status).toBe(303);
    const next = await b.get(retried.headers.get("location")!);
    const text = await next.text();
    expect(text).toContain("Retry queued");
    expect(text).toContain("Attempt 2");

    const event = await (await b.get(`/console/events/${evt.id}`)).text();
    expect(event).toContain(e1.id);
    expect(event).toContain(e2.id);
  });

  it("shows the scheme and masked custom headers, and the request as sent with the scheme's signature and masked values", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const value = "cv-console-77d1e4";
    const res = await h.api(token, "/webhooks", {
      method: "POST",
      body: JSON.stringify({
        url: HOOK,
        events: ["message.delivered"],
        headers: { Authorization: `Bearer ${value}`, "X-Route": value },
        signature_scheme: "standard-webhooks",
      }),
    });
    expect(res.status).toBe(201);
    const e = (await res.json()) as { id: string; secret: string };
    const page = await (await b.get(`/console/endpoints/${e.id}`)).text();
    expect(page).toContain("<code>standard-webhooks</code>");
    expect(page).toContain("<code>Authorization: ********</code>");
    expect(page).toContain("<code>X-Route: ********</code>");
    expect(page).not.toContain(value);

    const evt = await publish(h, token);
    const [d] = [...h.repos.deliveries.rows.values()].filter((x) => x.eventId === evt.id);
    const attemptedAt = new Date();
    // As the engine would have recorded it: the request as sent exists once the attempt was made.
    h.repos.deliveries.rows.set(d!.id, { ...d!, status: "succeeded", attemptedAt, responseStatus: 200 });
    const detail = await (await b.get(`/console/deliveries/${d!.id}`)).text();
    const ts = Math.floor(attemptedAt.getTime() / 1000);
    const signature = new Webhook(e.secret).sign(
      evt.id,
      new Date(ts * 1000),
      (await h.repos.events.getMany([evt.id]))[0]!.body,
    );
    expect(detail).toContain(`webhook-id: ${evt.id}`);
    expect(detail).toContain(`webhook-timestamp: ${ts}`);
    expect(detail).toContain(`webhook-signature: ${signature}`);
    expect(detail).toContain("Authorization: ********");
    expect(detail).toContain("X-Route: ********");
    expect(detail).not.toContain("X-Webhook-Signature");
    expect(detail).not.toContain(value);
    expect(detail).not.toContain(e.secret);
    expect(h.logLines.join("\n")).not.toContain(value);
  });

  it("rotates a secret (shown once), sends a test event, and recovers a window", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const e = await createEndpoint(h, token);
    const rotated = await b.post(`/console/endpoints/${e.id}/rotate`, {
      _csrf: await b.csrf(),
      grace_period_seconds: "3600",
    });
    expect(rotated.status).toBe(303);
    const secret = /whsec_[A-Za-z0-9+/=]+/.exec(await (await b.follow(rotated)).text())?.[0];
    expect(secret).toBeDefined();
    expect(secret).not.toBe(e.secret);

    const tested = await b.post(`/console/endpoints/${e.id}/test`, {
      _csrf: await b.csrf(),
      type: "message.delivered",
    });
    expect(tested.status).toBe(303);
    expect(tested.headers.get("location")).toMatch(/\/console\/deliveries\/[0-9a-f-]{36}\?notice=tested/);

    const recovered = await b.post(`/console/endpoints/${e.id}/recover`, {
      _csrf: await b.csrf(),
      since: "1h",
    });
    expect(recovered.status).toBe(303);
    expect(await (await b.follow(recovered)).text()).toMatch(/0 deliveries were queued again/);
    const badWindow = await b.post(`/console/endpoints/${e.id}/recover`, {
      _csrf: await b.csrf(),
      since: "whenever",
    });
    expect(badWindow.status).toBe(422);
  });
});

describe("console: live", () => {
  it("streams attempts written to the store by any process, and only the project's own", async () => {
    const h = await makeConsoleHarness();
    const { b, scope } = await h.signedIn();
    const controller = new AbortController();
    const res = await h.request("/console/live/stream", {
      headers: { Cookie: b.cookie! },
      signal: controller.signal,
    });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const reader = res.body!.getReader();
    let text = "";
    const readUntil = async (needle: string) => {
      const deadline = Date.now() + PATIENCE_MS;
      while (!text.includes(needle)) {
        if (Date.now() > deadline) throw new Error(`no ${needle} in the stream:\n${text}`);
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended:\n${text}`);
        text += new TextDecoder().decode(value);
      }
    };
    await readUntil("event: ready");
    // Written straight to the store, as another Herald process sharing the database would.
    const now = new Date();
    const base = {
      tenantId: scope.tenantId,
      projectId: scope.projectId,
      eventType: "message.delivered" as const,
      attempt: 1,
      trigger: "automatic" as const,
      url: HOOK,
      responseBody: null,
      durationMs: 12,
      scheduledAt: now,
      nextAttemptAt: null,
      createdAt: now,
      sequence: now.getTime() * 1000,
      erasedAt: null,
      signatureScheme: null,
      headerNames: null,
    };
    const foreign = { ...base, id: crypto.randomUUID(), tenantId: crypto.randomUUID() };
    const mine = { ...base, id: crypto.randomUUID() };
    await h.repos.deliveries.insertMany([
      {
        ...foreign,
        webhookId: crypto.randomUUID(),
        eventId: "evt_foreign",
        status: "failed",
        responseStatus: 500,
        error: "http_status",
        attemptedAt: now,
      },
      {
        ...mine,
        webhookId: crypto.randomUUID(),
        eventId: "evt_mine",
        status: "failed",
        responseStatus: 503,
        error: "http_status",
        attemptedAt: now,
      },
    ]);
    await readUntil(mine.id);
    controller.abort();
    const line = text.split("\n").find((l) => l.startsWith("data:") && l.includes(mine.id))!;
    expect(JSON.parse(line.slice(5))).toMatchObject({
      id: mine.id,
      status: "failed",
      response_status: 503,
      event_id: "evt_mine",
    });
    expect(text).not.toContain(foreign.id);
  });
});
