import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { makeConsoleHarness, ORIGIN } from "./console-harness.ts";

const FORM_FAILED = "Go back, correct it and try again";

describe("console: words", () => {
  it("says a page does not exist when it does not, not that a form failed", async () => {
    const h = await makeConsoleHarness();
    const { b } = await h.signedIn();
    for (const path of [
      `/console/endpoints/${crypto.randomUUID()}`,
      `/console/deliveries/${crypto.randomUUID()}`,
      "/console/events/evt_nothere",
      "/console/no-such-page",
      "/console/endpoints/not-an-id",
    ]) {
      const res = await b.get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-type"), path).toContain("text/html");
      const html = await res.text();
      expect(html, path).toContain("<h1>Not found</h1>");
      expect(html, path).toContain("It may have been deleted, or the address is not right.");
      expect(html, path).not.toContain("Something went wrong");
      expect(html, path).not.toContain(FORM_FAILED);
      expect(html, path).not.toContain("Nothing was changed");
    }
    expect(await (await b.get(`/console/endpoints/${crypto.randomUUID()}`)).text()).toContain(
      "The endpoint was not found.",
    );
    // A form still fails in the words of a form.
    const bad = await b.post("/console/privacy/erase", { _csrf: await b.csrf() });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain(FORM_FAILED);
  });

  it("calls a forged cross-site POST without the session cookie refused, not an ended session", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const made = await h.api(token, "/webhooks", {
      method: "POST",
      body: JSON.stringify({ url: "http://127.0.0.1:9/hook", events: ["message.delivered"] }),
    });
    const { id } = (await made.json()) as { id: string };
    const forgeries: Record<string, string>[] = [
      { "Sec-Fetch-Site": "cross-site", Origin: "https://evil.example" },
      { Origin: "https://evil.example" },
    ];
    for (const headers of forgeries) {
      // A SameSite=Strict cookie is not sent with another site's form: the forgery arrives without it.
      const res = await h.request(`/console/endpoints/${id}/disable`, {
        method: "POST",
        body: new URLSearchParams({ _csrf: "guessed" }),
        headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
      });
      expect(res.status).toBe(403);
      const html = await res.text();
      expect(html).toContain("Request refused");
      expect(html).not.toContain("session has ended");
      expect(html).not.toContain("signed out");
    }
    const portal = await h.request(`/portal/endpoints/${id}/disable`, {
      method: "POST",
      body: new URLSearchParams({ _csrf: "guessed" }),
      headers: { "Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "cross-site" },
    });
    expect(portal.status).toBe(403);
    expect(await portal.text()).toContain("Request refused");
    expect(((await (await h.api(token, `/webhooks/${id}`)).json()) as { enabled: boolean }).enabled).toBe(
      true,
    );

    // The same-origin form of a browser whose session ended is told so.
    const stale = b.cookie!;
    await b.post("/console/sign-out", { _csrf: await b.csrf() });
    const ended = await h.request(`/console/endpoints/${id}/disable`, {
      method: "POST",
      body: new URLSearchParams({ _csrf: "x" }),
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Origin: ORIGIN,
        "Sec-Fetch-Site": "same-origin",
        Cookie: stale,
      },
    });
    expect(ended.status).toBe(401);
    expect(await ended.text()).toContain("Your session has ended");
  });

  it("captions the Live page once", async () => {
    const h = await makeConsoleHarness();
    const { b } = await h.signedIn();
    const html = await (await b.get("/console/live")).text();
    const script = readFileSync(
      new URL("../../../../src/adapters/http/console/assets/app.js", import.meta.url),
      "utf8",
    );
    // What the page says of itself, with what its script writes once it is live.
    const said = html + script;
    expect(said.match(/as they happen/g)).toHaveLength(1);
    expect(html.match(/<h1>/g)).toHaveLength(1);
    expect(html).toContain("every Herald process sharing the database");
  });
});
