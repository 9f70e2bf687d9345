import { afterAll, describe, expect, it } from "vitest";
import { type HeraldProcess, type Runtime, startHerald } from "../../../support/herald-process.ts";

// The console on each runtime: a real Herald process (memory store, so it prints its first token),
// signed in over HTTP, one page, the script, the live stream and a portal link.

const started: HeraldProcess[] = [];
afterAll(async () => {
  await Promise.all(started.map((p) => p.stop()));
});

describe.each<Runtime>(["node", "bun", "deno"])("console on %s", (runtime) => {
  it("signs in, serves pages and its script under a strict CSP, streams live events, makes portal links", {
    timeout: 90_000,
  }, async () => {
    const server = await startHerald({
      runtime,
      env: { HERALD_STORE: "memory", HERALD_ALLOW_HTTP_URLS: "true" },
      readyTimeoutMs: 60_000,
    });
    started.push(server);
    const token = /hrld_[A-Za-z0-9_-]{43}/.exec(server.output())?.[0];
    expect(token, server.output()).toBeDefined();
    const base = server.baseUrl;

    const signIn = await fetch(`${base}/console/sign-in`, {
      method: "POST",
      redirect: "manual",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: base },
      body: new URLSearchParams({ token: token! }),
    });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers.get("set-cookie")?.split(";")[0];
    expect(cookie).toMatch(/^herald_console=/);

    const overview = await fetch(`${base}/console`, { headers: { Cookie: cookie! } });
    expect(overview.status).toBe(200);
    expect(overview.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(await overview.text()).toContain("<h1>Overview</h1>");

    const script = await fetch(`${base}/console/assets/app.js?v=x`);
    expect(script.headers.get("content-type")).toContain("text/javascript");
    expect(await script.text()).toContain("EventSource");

    const controller = new AbortController();
    const stream = await fetch(`${base}/console/live/stream`, {
      headers: { Cookie: cookie! },
      signal: controller.signal,
    });
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const reader = stream.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain("event: ready");
    controller.abort();

    const portal = await fetch(`${base}/api/v1/portal-sessions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ expires_in: 600 }),
    });
    expect(portal.status).toBe(201);
    const { url } = (await portal.json()) as { url: string };
    const entered = await fetch(url, { redirect: "manual" });
    expect(entered.status).toBe(303);
    expect(entered.headers.get("location")).toBe("/portal");

    // The attempt page's channel follows one attempt: a pending one is reported again once recorded.
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${base}/api/v1${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      });
    const made = await api("/webhooks", {
      method: "POST",
      // A closed loopback port: the attempt fails at once with connection_error and is recorded.
      body: JSON.stringify({ url: "http://127.0.0.1:9/hook", events: ["domain.verified"] }),
    });
    expect(made.status).toBe(201);
    const endpoint = (await made.json()) as { id: string };
    const published = await api("/events", {
      method: "POST",
      body: JSON.stringify({
        type: "domain.verified",
        data: { domain_id: crypto.randomUUID(), domain: "mail.example.com", status: "verified" },
      }),
    });
    expect(published.status).toBe(202);
    const listed = (await (await api(`/webhooks/${endpoint.id}/deliveries`)).json()) as {
      data: { id: string }[];
    };
    const deliveryId = listed.data.at(-1)!.id;
    const follow = new AbortController();
    const attempts = await fetch(`${base}/console/live/stream?delivery=${deliveryId}`, {
      headers: { Cookie: cookie!, Accept: "text/event-stream" },
      signal: follow.signal,
    });
    expect(attempts.status).toBe(200);
    const events = attempts.body!.getReader();
    let text = "";
    while (!/event: delivery\ndata: .*"status":"failed"/.test(text)) {
      const { value, done } = await events.read();
      if (done) throw new Error(`the attempt's stream ended before its result:\n${text}`);
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain(deliveryId);
    follow.abort();
  });
});
