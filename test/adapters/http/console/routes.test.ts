import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { PATIENCE_MS } from "../../../support/patience.ts";
import { makeConsoleHarness, pathOf } from "./console-harness.ts";

const HOOK = "http://127.0.0.1:9/hook";

async function createEndpoint(
  h: Awaited<ReturnType<typeof makeConsoleHarness>>,
  token: string,
  events = ["message.delivered"],
) {
  const res = await h.api(token, "/webhooks", {
    method: "POST",
    body: JSON.stringify({ url: HOOK, events }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; secret: string };
}

async function publish(h: Awaited<ReturnType<typeof makeConsoleHarness>>, token: string) {
  const res = await h.publish(token);
  expect(res.status).toBe(202);
  return (await res.json()) as { id: string };
}

describe("console: headers and sign-in", () => {
  it("answers every page with a strict CSP that forbids framing, and no inline script or style", async () => {
    const h = await makeConsoleHarness({ frameAncestors: ["https://app.example.com"] });
    const { b } = await h.signedIn();
    const signInPage = await h.request("/console/sign-in");
    expect(signInPage.status).toBe(200);
    expect(signInPage.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    for (const path of ["/console", "/console/deliveries", "/console/live", "/console/catalog"]) {
      const res = await b.get(path);
      expect(res.status, path).toBe(200);
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      const html = await res.text();
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(html).not.toMatch(/\sstyle="/);
    }
  });

  it("sets an HttpOnly, SameSite=Strict session cookie on sign-in, Secure over HTTPS, and never echoes the token", async () => {
    const h = await makeConsoleHarness();
    const { token } = await h.newToken();
    const plain = await h.request("/console/sign-in", {
      method: "POST",
      body: new URLSearchParams({ token }),
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(plain.status).toBe(303);
    expect(plain.headers.get("location")).toBe("/console");
    const cookie = plain.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^herald_console=[A-Za-z0-9_-]{43};/);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain("Path=/console");
    expect(cookie).not.toContain("Secure");
    expect(cookie).not.toContain(token);

    const secure = await h.app.request(
      new Request("https://herald.test/console/sign-in", {
        method: "POST",
        body: new URLSearchParams({ token }),
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
      }),
    );
    expect(secure.headers.get("set-cookie")).toContain("Secure");
  });

  it("refuses a bad token in plain words, and sends a signed-out browser to the sign-in page", async () => {
    const h = await makeConsoleHarness();
    const b = h.browser();
    const bad = await b.post("/console/sign-in", { token: "hrld_nope" });
    expect(bad.status).toBe(401);
    expect(await bad.text()).toContain("That API token is not valid");
    expect(bad.headers.get("set-cookie")).toBeNull();
    const page = await b.get("/console/deliveries");
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/console/sign-in");
  });

  it("signs out: the cookie stops working at once", async () => {
    const h = await makeConsoleHarness();
    const { b } = await h.signedIn();
    const stolen = b.cookie!;
    const out = await b.post("/console/sign-out", { _csrf: await b.csrf() });
    expect(out.status).toBe(303);
    const again = await h.request("/console", { headers: { Cookie: stolen } });
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe("/console/sign-in");
  });

  it("redeems a `herald console` sign-in link once, and lands on a URL without the code", async () => {
    const h = await makeConsoleHarness();
    const { token } = await h.newToken();
    expect((await h.request("/console/sign-in/links", { method: "POST" })).status).toBe(401);
    const made = await h.request("/console/sign-in/links", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(made.status).toBe(201);
    const { url } = (await made.json()) as { url: string };
    const path = new URL(url).pathname + new URL(url).search;
    const b = h.browser();
    const first = await b.get(path);
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe("/console");
    expect(b.cookie).not.toBeNull();
    expect((await b.get("/console")).status).toBe(200);
    const second = await h.browser().get(path);
    expect(second.status).toBe(401);
    expect(await second.text()).toContain("expired");
  });

  it("expires a sign-in link after five minutes even unused", async () => {
    const h = await makeConsoleHarness();
    const { token } = await h.newToken();
    const made = await h.request("/console/sign-in/links", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}` },
    });
    const { url } = (await made.json()) as { url: string };
    h.advance(5 * 60_000 + 1000);
    const res = await h.browser().get(new URL(url).pathname + new URL(url).search);
    expect(res.status).toBe(401);
  });
});

describe("console: page weight", () => {
  it("loads the overview, its stylesheet and its script in under 32 KiB, with nothing else to fetch", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    for (let i = 0; i < 5; i++) {
      await h.api(token, "/webhooks", {
        method: "POST",
        body: JSON.stringify({ url: `${HOOK}/${i}`, events: ["message.delivered"] }),
      });
    }
    const html = await (await b.get("/console")).text();
    const assets = [...html.matchAll(/(?:href|src)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toHaveLength(2);
    let bytes = new TextEncoder().encode(html).length;
    for (const a of assets) bytes += (await (await h.request(a)).arrayBuffer()).byteLength;
    expect(bytes).toBeLessThan(32 * 1024);
    // No other subresource: no images, fonts or frames to fetch.
    expect(html).not.toMatch(/<(img|iframe|object|embed)\b/);
    expect(html.match(/<(link|script)\b/g)).toHaveLength(3);
  });
});

describe("console: cross-site request forgery", () => {
  it("refuses a state change without the session's token, from another site, or from another origin", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const e = await createEndpoint(h, token);
    const csrf = await b.csrf();
    const path = `/console/endpoints/${e.id}/disable`;
    expect((await b.post(path, {})).status).toBe(403);
    expect((await b.post(path, { _csrf: "x".repeat(43) })).status).toBe(403);
    expect((await b.post(path, { _csrf: csrf }, { "Sec-Fetch-Site": "cross-site" })).status).toBe(403);
    expect((await b.post(path, { _csrf: csrf }, { Origin: "https://evil.example" })).status).toBe(403);
    const still = (await (await h.api(token, `/webhooks/${e.id}`)).json()) as { enabled: boolean };
    expect(still.enabled).toBe(true);

    const ok = await b.post(path, { _csrf: csrf });
    expect(ok.status).toBe(303);
    const now = (await (await h.api(token, `/webhooks/${e.id}`)).json()) as {
      enabled: boolean;
      disabled_reason: string;
    };
    expect(now).toMatchObject({ enabled: false, disabled_reason: "manual" });
  });

  it("refuses a sign-in form posted from another site (login CSRF)", async () => {
    const h = await makeConsoleHarness();
    const { token } = await h.newToken();
    const res = await h.browser().post("/console/sign-in", { token }, { "Sec-Fetch-Site": "cross-site" });
    expect(res.status).toBe(403);
    expect(res.headers.get("set-cookie")).toBeNull();
  });
});

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

describe("console: endpoint state", () => {
  it("disables and enables an endpoint, and deletes it only when the deletion is confirmed", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const e = await createEndpoint(h, token);
    const state = async () => (await h.api(token, `/webhooks/${e.id}`)).status;
    expect((await b.post(`/console/endpoints/${e.id}/disable`, { _csrf: await b.csrf() })).status).toBe(303);
    const disabled = await (await b.get(`/console/endpoints/${e.id}`)).text();
    expect(disabled).toContain("disabled</strong> (manual)");
    expect((await b.post(`/console/endpoints/${e.id}/enable`, { _csrf: await b.csrf() })).status).toBe(303);
    expect(await (await b.get(`/console/endpoints/${e.id}?notice=enabled`)).text()).toContain(
      "Endpoint enabled.",
    );

    const unconfirmed = await b.post(`/console/endpoints/${e.id}/delete`, { _csrf: await b.csrf() });
    expect(unconfirmed.status).toBe(422);
    expect(await unconfirmed.text()).toContain("confirm: must be ticked");
    expect(await state()).toBe(200);
    const deleted = await b.post(`/console/endpoints/${e.id}/delete`, {
      _csrf: await b.csrf(),
      confirm: "yes",
    });
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get("location")).toBe("/console?notice=deleted");
    expect(await state()).toBe(404);
    expect((await b.get(`/console/endpoints/${e.id}`)).status).toBe(404);
  });
});

describe("console: endpoint filter", () => {
  it("shows the endpoint's filter, escaped, and keeps it when the settings form is saved", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const e = await createEndpoint(h, token);
    expect(await (await b.get(`/console/endpoints/${e.id}`)).text()).toContain(
      "<dt>Filter</dt><dd>none: every event of its types</dd>",
    );
    const filter = { "data.metadata.note": { $regex: "<script>" }, "data.channel": "email" };
    const patched = await h.api(token, `/webhooks/${e.id}`, {
      method: "PATCH",
      body: JSON.stringify({ filter }),
    });
    expect(patched.status).toBe(200);
    const page = await (await b.get(`/console/endpoints/${e.id}`)).text();
    const shown = /<pre class="code" id="filter"[^>]*>([^<]*)<\/pre>/.exec(page)?.[1];
    expect(shown).toBe(
      JSON.stringify(filter, null, 2)
        .replaceAll("&", "&amp;")
        .replaceAll("<", "&lt;")
        .replaceAll(">", "&gt;")
        .replaceAll('"', "&quot;"),
    );
    expect(page).not.toContain("<script>");
    const saved = await b.post(`/console/endpoints/${e.id}/update`, {
      _csrf: await b.csrf(),
      url: HOOK,
      description: "renamed",
      events: ["message.delivered"],
    });
    expect(saved.status).toBe(303);
    const after = (await (await h.api(token, `/webhooks/${e.id}`)).json()) as {
      filter: unknown;
      description: string;
    };
    expect(after).toMatchObject({ filter, description: "renamed" });
  });
});

describe("console: delivery controls", () => {
  it("sets, shows, changes and removes an endpoint's rate limit from its forms; refuses a bad one in plain words", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const created = await b.post("/console/endpoints", {
      _csrf: await b.csrf(),
      url: HOOK,
      rate_limit: "5/s",
      events: ["message.delivered"],
    });
    expect(created.status).toBe(303);
    const id = /\/console\/endpoints\/([0-9a-f-]{36})\/secret$/.exec(created.headers.get("location")!)?.[1];
    const api = async () => (await (await h.api(token, `/webhooks/${id}`)).json()) as { rate_limit: unknown };
    expect((await api()).rate_limit).toEqual({ per_second: 5 });
    const page = await (await b.get(`/console/endpoints/${id}`)).text();
    expect(page).toContain("<dt>Rate limit</dt><dd>5/s</dd>");
    expect(page).toContain('name="rate_limit" type="text" maxlength="16" value="5/s"');

    const settings = (rateLimit: string) => ({
      _csrf: "",
      url: HOOK,
      description: "",
      events: ["message.delivered"],
      rate_limit: rateLimit,
    });
    const save = async (rateLimit: string) =>
      b.post(`/console/endpoints/${id}/update`, { ...settings(rateLimit), _csrf: await b.csrf() });
    expect((await save("300/m")).status).toBe(303);
    expect((await api()).rate_limit).toEqual({ per_minute: 300 });
    expect(await (await b.get(`/console/endpoints/${id}`)).text()).toContain(
      "<dt>Rate limit</dt><dd>300/m</dd>",
    );
    const bad = await save("lots");
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("rate_limit: &quot;lots&quot; is not a limit like 5/s or 300/m");
    const tooMany = await save("1001/s");
    expect(tooMany.status).toBe(422);
    expect(await tooMany.text()).toContain("rate_limit: must be an integer from 1 to 1000 per second");
    expect((await api()).rate_limit).toEqual({ per_minute: 300 });
    expect((await save("")).status).toBe(303);
    expect((await api()).rate_limit).toBeNull();
    expect(await (await b.get(`/console/endpoints/${id}`)).text()).toContain(
      "<dt>Rate limit</dt><dd>none</dd>",
    );
  });
});

describe("console: ordered delivery", () => {
  it("creates a FIFO endpoint from the form, shows how many deliveries it holds, and switches it back", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const created = await b.post("/console/endpoints", {
      _csrf: await b.csrf(),
      url: HOOK,
      ordering: "fifo",
      events: ["message.delivered"],
    });
    expect(created.status).toBe(303);
    const id = /\/console\/endpoints\/([0-9a-f-]{36})\/secret$/.exec(created.headers.get("location")!)?.[1];
    for (let i = 0; i < 3; i++) await publish(h, token);
    const page = await (await b.get(`/console/endpoints/${id}`)).text();
    expect(page).toContain("<dt>Ordering</dt><dd>FIFO, <strong>2</strong> held behind the head</dd>");
    expect(page).toContain('<option value="fifo" selected>FIFO</option>');
    const saved = await b.post(`/console/endpoints/${id}/update`, {
      _csrf: await b.csrf(),
      url: HOOK,
      description: "",
      events: ["message.delivered"],
      rate_limit: "",
      ordering: "none",
    });
    expect(saved.status).toBe(303);
    const api = (await (await h.api(token, `/webhooks/${id}`)).json()) as { ordering: string; held: number };
    expect(api).toMatchObject({ ordering: "none", held: 0 });
    expect(await (await b.get(`/console/endpoints/${id}`)).text()).toContain(
      "<dt>Ordering</dt><dd>none</dd>",
    );
    const bad = await b.post(`/console/endpoints/${id}/update`, {
      _csrf: await b.csrf(),
      url: HOOK,
      events: ["message.delivered"],
      ordering: "lifo",
    });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("ordering: must be none or fifo");
  });
});

describe("console: tenancy", () => {
  it("shows a project nothing of another's, in any page or action", async () => {
    const h = await makeConsoleHarness();
    const a = await h.signedIn();
    const e = await createEndpoint(h, a.token);
    const evt = await publish(h, a.token);
    const deliveryId =
      /data-id="([0-9a-f-]{36})"/.exec(await (await a.b.get("/console/deliveries")).text())?.[1] ?? "";

    const other = await h.signedIn();
    const csrf = await other.b.csrf();
    for (const path of [
      `/console/endpoints/${e.id}`,
      `/console/deliveries/${deliveryId}`,
      `/console/events/${evt.id}`,
      `/console/deliveries?webhook_id=${e.id}`,
    ]) {
      expect((await other.b.get(path)).status, path).toBe(404);
    }
    for (const path of [
      `/console/deliveries/${deliveryId}/retry`,
      `/console/endpoints/${e.id}/disable`,
      `/console/endpoints/${e.id}/rotate`,
    ]) {
      expect((await other.b.post(path, { _csrf: csrf })).status, path).toBe(404);
    }
    const lists =
      (await (await other.b.get("/console/deliveries")).text()) +
      (await (await other.b.get("/console")).text());
    expect(lists).not.toContain(e.id);
    expect(lists).not.toContain(evt.id);
  });
});

describe("customer portal", () => {
  it("creates a link limited to some endpoints; the portal cannot reach the others", async () => {
    const h = await makeConsoleHarness({ frameAncestors: ["https://app.example.com"] });
    const { token } = await h.newToken();
    const mine = await createEndpoint(h, token);
    const theirs = await createEndpoint(h, token);
    await publish(h, token);
    const res = await h.api(token, "/portal-sessions", {
      method: "POST",
      body: JSON.stringify({ webhook_ids: [mine.id] }),
    });
    expect(res.status).toBe(201);
    const link = (await res.json()) as { id: string; url: string; expires_at: string; webhook_ids: string[] };
    expect(link.webhook_ids).toEqual([mine.id]);
    expect(Date.parse(link.expires_at) - Date.now()).toBeGreaterThan(3500_000);

    const p = h.browser("herald_portal");
    const entered = await p.get(pathOf(link.url));
    expect(entered.status).toBe(303);
    expect(entered.headers.get("location")).toBe("/portal");
    const home = await p.get("/portal");
    expect(home.status).toBe(200);
    expect(home.headers.get("content-security-policy")).toContain("frame-ancestors https://app.example.com");
    expect(home.headers.get("x-frame-options")).toBeNull();
    const html = await home.text();
    expect(html).toContain(mine.id);
    expect(html).not.toContain(theirs.id);
    // The backlog counts only the portal's endpoints (both have one pending delivery).
    expect(html).toContain('<dd id="due-backlog">1</dd>');
    expect(html).not.toContain("/console/catalog");

    expect((await p.get(`/portal/endpoints/${mine.id}`)).status).toBe(200);
    expect((await p.get(`/portal/endpoints/${theirs.id}`)).status).toBe(404);
    expect((await p.get(`/portal/deliveries?webhook_id=${theirs.id}`)).status).toBe(404);
    const deliveries = await (await p.get("/portal/deliveries")).text();
    expect(deliveries.match(/<tr data-id=/g)).toHaveLength(1);
    const csrf = await p.csrf("/portal");
    expect((await p.post(`/portal/endpoints/${theirs.id}/rotate`, { _csrf: csrf })).status).toBe(404);
    expect(
      (await p.post(`/portal/endpoints/${mine.id}/rotate`, { _csrf: csrf, grace_period_seconds: "0" }))
        .status,
    ).toBe(303);
    // The portal's cookie does not open the console.
    expect((await h.request("/console", { headers: { Cookie: p.cookie! } })).status).toBe(303);
    expect((await p.get("/portal/catalog")).status).toBe(404);
    // Neither the link's secret, the session cookie nor the API token reaches the log.
    const secretOfLink = new URL(link.url).searchParams.get("code")!;
    const logs = h.logLines.join("\n");
    expect(h.logLines.length).toBeGreaterThan(5);
    expect(logs).not.toContain(secretOfLink);
    expect(logs).not.toContain(p.cookie!.split("=")[1]!);
    expect(logs).not.toContain(token);
  });

  it("refuses a revoked link and signs out the browsers it opened", async () => {
    const h = await makeConsoleHarness();
    const { token } = await h.newToken();
    const link = (await (await h.api(token, "/portal-sessions", { method: "POST", body: "{}" })).json()) as {
      id: string;
      url: string;
    };
    const p = h.browser("herald_portal");
    await p.get(pathOf(link.url));
    expect((await p.get("/portal")).status).toBe(200);
    const other = await h.newToken();
    expect((await h.api(other.token, `/portal-sessions/${link.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await h.api(token, `/portal-sessions/${link.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await h.api(token, `/portal-sessions/${link.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await p.get("/portal")).status).toBe(401);
    expect((await h.browser("herald_portal").get(pathOf(link.url))).status).toBe(401);
  });

  it("refuses an expired link, and validates what it is asked for", async () => {
    const h = await makeConsoleHarness();
    const { token } = await h.newToken();
    const link = (await (
      await h.api(token, "/portal-sessions", { method: "POST", body: JSON.stringify({ expires_in: 60 }) })
    ).json()) as { url: string };
    const p = h.browser("herald_portal");
    await p.get(pathOf(link.url));
    expect((await p.get("/portal")).status).toBe(200);
    h.advance(61_000);
    expect((await p.get("/portal")).status).toBe(401);
    expect((await h.browser("herald_portal").get(pathOf(link.url))).status).toBe(401);

    const tooLong = await h.api(token, "/portal-sessions", {
      method: "POST",
      body: JSON.stringify({ expires_in: 86_401 }),
    });
    expect(tooLong.status).toBe(422);
    const foreign = await h.api(token, "/portal-sessions", {
      method: "POST",
      body: JSON.stringify({ webhook_ids: [crypto.randomUUID()] }),
    });
    expect(foreign.status).toBe(422);
    expect(((await foreign.json()) as { errors: { path: string }[] }).errors[0]?.path).toBe(
      "body.webhook_ids.0",
    );
    expect((await h.request("/api/v1/portal-sessions", { method: "POST" })).status).toBe(401);
  });
});
