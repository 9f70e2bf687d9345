import { describe, expect, it } from "vitest";
import { makeConsoleHarness, pathOf } from "./console-harness.ts";

const HOOK = "http://127.0.0.1:9/hook";
const SECRET = /whsec_[A-Za-z0-9+/=]+/g;

type Harness = Awaited<ReturnType<typeof makeConsoleHarness>>;

async function endpointCount(h: Harness, token: string): Promise<number> {
  const res = await h.api(token, "/webhooks");
  return ((await res.json()) as { data: unknown[] }).data.length;
}

describe("console: Post/Redirect/Get", () => {
  it("answers the new-endpoint form with a redirect; the GET shows the secret once; a reload shows it no more and creates nothing", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const posted = await b.post("/console/endpoints", {
      _csrf: await b.csrf(),
      url: HOOK,
      events: ["message.delivered"],
    });
    expect(posted.status).toBe(303);
    const location = posted.headers.get("location")!;
    expect(location).toMatch(/^\/console\/endpoints\/[0-9a-f-]{36}\/secret$/);
    // The redirect itself carries no secret: not in its body, its address, nor readable in its cookie.
    const setCookies = posted.headers.getSetCookie().join("\n");
    expect(await posted.text()).not.toMatch(SECRET);
    expect(location).not.toMatch(SECRET);
    expect(setCookies).not.toMatch(SECRET);
    const flash = posted.headers.getSetCookie().find((c) => c.startsWith("herald_console_flash="))!;
    expect(flash).toContain("HttpOnly");
    expect(flash).toContain("SameSite=Strict");
    // Scoped to the one page that shows it: no other request of the console carries it.
    expect(flash).toContain(`Path=${location}`);
    expect(flash).toMatch(/Max-Age=120/);
    const sealed = flash.split(";")[0]!.split("=")[1]!;
    expect(atob(sealed.replaceAll("-", "+").replaceAll("_", "/"))).not.toContain("whsec_");

    const first = await b.get(location);
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    const shown = await first.text();
    const secrets = [...new Set(shown.match(SECRET))];
    expect(secrets).toHaveLength(1);
    expect(shown).toContain("it is shown only this once");
    // The first GET that shows it clears it.
    expect(first.headers.getSetCookie().some((c) => /^herald_console_flash=;.*Max-Age=0/i.test(c))).toBe(
      true,
    );
    expect(b.jar.has("herald_console_flash")).toBe(false);

    for (let reload = 0; reload < 2; reload++) {
      const again = await b.get(location);
      expect(again.status).toBe(200);
      const text = await again.text();
      expect(text).not.toMatch(SECRET);
      expect(text).toContain("This secret was shown once");
    }
    expect(await endpointCount(h, token)).toBe(1);
    // The page it led to is the created endpoint's.
    const [e] = ((await (await h.api(token, "/webhooks")).json()) as { data: { id: string }[] }).data;
    expect(location).toBe(`/console/endpoints/${e!.id}/secret`);
  });

  it("shows a rotated secret once, after a redirect; another session cannot open the flash, nor a forged one", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const made = await h.api(token, "/webhooks", {
      method: "POST",
      body: JSON.stringify({ url: HOOK, events: ["message.delivered"] }),
    });
    const e = (await made.json()) as { id: string; secret: string };
    const rotated = await b.post(`/console/endpoints/${e.id}/rotate`, {
      _csrf: await b.csrf(),
      grace_period_seconds: "0",
    });
    expect(rotated.status).toBe(303);
    expect(rotated.headers.get("location")).toBe(`/console/endpoints/${e.id}/secret`);
    const flash = b.jar.get("herald_console_flash")!;
    expect(flash).toBeDefined();

    // The same project signed in elsewhere, given the flash cookie: it is sealed for the first session.
    const other = h.browser();
    expect((await other.post("/console/sign-in", { token })).status).toBe(303);
    const stolen = await h.request(`/console/endpoints/${e.id}/secret`, {
      headers: { Cookie: `${other.cookie}; herald_console_flash=${flash}` },
    });
    expect(stolen.status).toBe(200);
    expect(await stolen.text()).not.toMatch(SECRET);
    // Tampered with: refused quietly, no secret and no error.
    const forged = await h.request(`/console/endpoints/${e.id}/secret`, {
      headers: { Cookie: `${b.cookie}; herald_console_flash=${flash.slice(0, -4)}AAAA` },
    });
    expect(forged.status).toBe(200);
    expect(await forged.text()).not.toMatch(SECRET);
    // For another endpoint's page, the flash shows nothing there.
    const second = (await (
      await h.api(token, "/webhooks", {
        method: "POST",
        body: JSON.stringify({ url: HOOK, events: ["message.delivered"] }),
      })
    ).json()) as { id: string };
    const elsewhere = await h.request(`/console/endpoints/${second.id}/secret`, {
      headers: { Cookie: `${b.cookie}; herald_console_flash=${flash}` },
    });
    expect(await elsewhere.text()).not.toMatch(SECRET);

    const page = await (await b.follow(rotated)).text();
    const [secret] = page.match(SECRET) ?? [];
    expect(secret).toBeDefined();
    expect(secret).not.toBe(e.secret);
    expect(page).toContain("New signing secret");
    expect(await (await b.get(`/console/endpoints/${e.id}/secret`)).text()).not.toMatch(SECRET);
  });

  it("answers every form of the console and the portal with 303 to a page that answers a GET", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const e = (await (
      await h.api(token, "/webhooks", {
        method: "POST",
        body: JSON.stringify({ url: HOOK, events: ["message.delivered"] }),
      })
    ).json()) as { id: string };
    const csrf = await b.csrf();
    const posts: [string, Record<string, string | string[]>][] = [
      ["/console/endpoints", { url: HOOK, events: ["message.delivered"] }],
      [`/console/endpoints/${e.id}/update`, { url: HOOK, events: ["message.delivered"], description: "x" }],
      [`/console/endpoints/${e.id}/disable`, {}],
      [`/console/endpoints/${e.id}/enable`, {}],
      [`/console/endpoints/${e.id}/test`, { type: "message.delivered" }],
      [`/console/endpoints/${e.id}/rotate`, { grace_period_seconds: "3600" }],
      [`/console/endpoints/${e.id}/recover`, { since: "1h" }],
      ["/console/privacy/retention", { retention: "7d" }],
      ["/console/privacy/erase", { recipient: "nobody@example.com", confirm: "yes" }],
    ];
    for (const [path, form] of posts) {
      const res = await b.post(path, { ...form, _csrf: csrf });
      expect(res.status, path).toBe(303);
      const next = await b.follow(res);
      expect(next.status, `${path} → ${res.headers.get("location")}`).toBe(200);
    }
    const tested = [...h.repos.deliveries.rows.values()][0]!;
    const retried = await b.post(`/console/deliveries/${tested.id}/retry`, { _csrf: csrf });
    expect(retried.status).toBe(303);
    expect((await b.follow(retried)).status).toBe(200);
    // The erasure's result is on the page the redirect leads to, and a reload shows it again, erasing nothing more.
    const erased = await b.post("/console/privacy/erase", {
      _csrf: csrf,
      recipient: "nobody@example.com",
      confirm: "yes",
    });
    const result = erased.headers.get("location")!;
    expect(result).toMatch(/^\/console\/privacy\?erasure=[0-9a-f-]{36}$/);
    const erasures = async () =>
      ((await (await h.api(token, "/erasures")).json()) as { data: unknown[] }).data.length;
    const before = await erasures();
    expect(await (await b.get(result)).text()).toContain('id="erasure-result"');
    expect(await (await b.get(result)).text()).toContain('id="erasure-result"');
    expect(await erasures()).toBe(before);
    // Another project's erasure id shows nothing.
    const other = await h.signedIn();
    expect(await (await other.b.get(result)).text()).not.toContain('id="erasure-result"');

    const out = await b.post("/console/sign-out", { _csrf: csrf });
    expect(out.status).toBe(303);

    const link = (await (
      await h.api(token, "/portal-sessions", {
        method: "POST",
        body: JSON.stringify({ webhook_ids: [e.id] }),
      })
    ).json()) as { url: string };
    const p = h.browser("herald_portal");
    await p.get(pathOf(link.url));
    const portalCsrf = await p.csrf("/portal");
    const rotated = await p.post(`/portal/endpoints/${e.id}/rotate`, {
      _csrf: portalCsrf,
      grace_period_seconds: "0",
    });
    expect(rotated.status).toBe(303);
    expect(rotated.headers.getSetCookie().join()).toContain("herald_portal_flash=");
    expect(rotated.headers.getSetCookie().join()).toContain(`Path=/portal/endpoints/${e.id}/secret`);
    expect(await (await p.follow(rotated)).text()).toMatch(SECRET);
    expect(await (await p.get(`/portal/endpoints/${e.id}/secret`)).text()).not.toMatch(SECRET);
    const portalOut = await p.post("/portal/sign-out", { _csrf: portalCsrf });
    expect(portalOut.status).toBe(303);
    expect(portalOut.headers.get("location")).toBe("/portal/signed-out");
    const bye = await p.follow(portalOut);
    expect(bye.status).toBe(200);
    expect(await bye.text()).toContain("You can close this page.");
  });
});
