import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.ts";
import { makeConsoleHarness, ORIGIN, pathOf } from "../adapters/http/console/console-harness.ts";
import { recordingIo } from "./helpers.ts";

// `herald console` and `herald portal create|revoke`, run in-process against the app with the console.

async function cli(h: Awaited<ReturnType<typeof makeConsoleHarness>>, token: string, args: string[]) {
  const rec = recordingIo({ HERALD_URL: ORIGIN, HERALD_TOKEN: token });
  const code = await runCli(args, rec.io, { fetch: (r) => Promise.resolve(h.app.fetch(r)) });
  return { code, out: rec.out.join("\n"), err: rec.err.join("\n") };
}

describe("herald console", () => {
  it("prints a one-time sign-in link that signs a browser in once", async () => {
    const h = await makeConsoleHarness();
    const { token } = await h.newToken();
    const r = await cli(h, token, ["console", "--json"]);
    expect(r.code).toBe(0);
    const { url, expires_at } = JSON.parse(r.out) as { url: string; expires_at: string };
    expect(url).toMatch(/^http:\/\/herald\.test\/console\/sign-in\/link\?code=[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(expires_at) - Date.now()).toBeLessThanOrEqual(5 * 60_000);
    const b = h.browser();
    expect((await b.get(new URL(url).pathname + new URL(url).search)).status).toBe(303);
    expect((await b.get("/console")).status).toBe(200);

    const human = await cli(h, token, ["console"]);
    expect(human.out).toContain("works once, within 5 minutes");
  });

  it("says in one line when the token is wrong", async () => {
    const h = await makeConsoleHarness();
    const r = await cli(h, `hrld_${"x".repeat(43)}`, ["console"]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^herald: 401 unauthorized: .* Check HERALD_TOKEN\.$/);
  });
});

describe("herald portal", () => {
  it("creates a portal link limited to an endpoint, and revokes it", async () => {
    const h = await makeConsoleHarness();
    const { token } = await h.newToken();
    const created = await h.api(token, "/webhooks", {
      method: "POST",
      body: JSON.stringify({ url: "https://example.com/h", events: ["message.delivered"] }),
    });
    const { id: webhookId } = (await created.json()) as { id: string };
    const r = await cli(h, token, [
      "portal",
      "create",
      "--expires-in",
      "600",
      "--webhook",
      webhookId,
      "--json",
    ]);
    expect(r.code).toBe(0);
    const link = JSON.parse(r.out) as { id: string; url: string; webhook_ids: string[] };
    expect(link.webhook_ids).toEqual([webhookId]);
    const p = h.browser("herald_portal");
    await p.get(pathOf(link.url));
    expect((await p.get("/portal")).status).toBe(200);

    const revoked = await cli(h, token, ["portal", "revoke", link.id]);
    expect(revoked).toMatchObject({ code: 0, out: `Revoked portal session ${link.id}.` });
    expect((await p.get("/portal")).status).toBe(401);
    const again = await cli(h, token, ["portal", "revoke", link.id]);
    expect(again.code).toBe(1);
    expect(again.err).toContain("404 not_found");

    const bad = await cli(h, token, ["portal", "create", "--expires-in", "90000"]);
    expect(bad.code).toBe(2);
  });
});
