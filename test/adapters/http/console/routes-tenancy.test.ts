import { describe, expect, it } from "vitest";
import { makeConsoleHarness, pathOf } from "./console-harness.ts";
import { createEndpoint, publish } from "./routes-support.ts";

// What a project sees of another's in the console (nothing), and what a portal link reaches (its endpoints only).

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
