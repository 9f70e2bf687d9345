import { describe, expect, it } from "vitest";
import { makeConsoleHarness } from "./console-harness.ts";
import { createEndpoint, HOOK } from "./routes-support.ts";

// The console's headers and sign-in, its page weight, and its refusal of cross-site requests.

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
