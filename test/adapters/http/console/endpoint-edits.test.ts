import { describe, expect, it } from "vitest";
import { makeConsoleHarness, pathOf } from "./console-harness.ts";
import { createEndpoint, type Harness, webhook } from "./endpoint-edits-support.ts";

// The console edits what PATCH /webhooks/{id} edits (issue 17, item 5): custom headers (write-only
// values), the payload filter with its test, and the signature scheme.
// This file: custom headers; endpoint-filter.test.ts: the filter; endpoint-scheme.test.ts: the scheme.

/** The stored header values, opened: what a delivery would send. */
async function storedHeaders(h: Harness, id: string): Promise<Record<string, string>> {
  const e = h.repos.endpoints.rows.get(id)!;
  return Object.fromEntries(
    await Promise.all(e.headers.map(async (x) => [x.name, await h.cipher.open(x.sealed)])),
  );
}

describe("console: custom headers", () => {
  it("shows names with the mask and never a value; a blank value keeps it, Remove removes it, a new row adds one", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const values = ["Bearer cv-auth-5c1e0a", "cv-route-90d2", "cv-tenant-77ab", "cv-replaced-3f"];
    const e = await createEndpoint(h, token, {
      headers: { Authorization: values[0], "X-Route": values[1] },
    });
    const pages: string[] = [];
    const page = await (await b.get(`/console/endpoints/${e.id}`)).text();
    pages.push(page);
    expect(page).toContain('<h2 id="h-headers">Custom headers</h2>');
    expect(page).toContain("<code>Authorization</code>");
    expect(page).toContain('placeholder="******** (blank keeps it)"');
    expect(page).toContain('aria-label="New value for X-Route"');
    expect(page).toContain('name="header_0_remove"');

    const csrf = await b.csrf(`/console/endpoints/${e.id}`);
    const sealedBefore = h.repos.endpoints.rows
      .get(e.id)!
      .headers.find((x) => x.name === "Authorization")!.sealed;
    // Authorization left blank (kept), X-Route removed, X-Tenant added.
    const saved = await b.post(`/console/endpoints/${e.id}/headers`, {
      _csrf: csrf,
      header_0_name: "Authorization",
      header_0_stored: "yes",
      header_0_value: "",
      header_1_name: "X-Route",
      header_1_stored: "yes",
      header_1_value: "",
      header_1_remove: "yes",
      header_2_name: "X-Tenant",
      header_2_value: values[2]!,
      header_3_name: "",
      header_3_value: "",
    });
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe(`/console/endpoints/${e.id}?notice=headers`);
    pages.push(await saved.text());
    const after = await (await b.follow(saved)).text();
    pages.push(after);
    expect(after).toContain("Custom headers saved");
    expect(after).toContain("<code>X-Tenant: ********</code>");
    expect(after).not.toContain("X-Route");
    expect((await webhook(h, token, e.id)).headers).toEqual({
      Authorization: "********",
      "X-Tenant": "********",
    });
    expect(await storedHeaders(h, e.id)).toEqual({ Authorization: values[0], "X-Tenant": values[2] });
    // The kept value is the very sealed text it was: not re-sealed from anything the page held.
    expect(h.repos.endpoints.rows.get(e.id)!.headers.find((x) => x.name === "Authorization")!.sealed).toBe(
      sealedBefore,
    );

    // A value typed on a stored row replaces it; nothing typed and nothing ticked changes nothing.
    const replaced = await b.post(`/console/endpoints/${e.id}/headers`, {
      _csrf: csrf,
      header_0_name: "Authorization",
      header_0_stored: "yes",
      header_0_value: values[3]!,
      header_1_name: "X-Tenant",
      header_1_stored: "yes",
      header_1_value: "",
    });
    expect(replaced.status).toBe(303);
    pages.push(await (await b.follow(replaced)).text());
    expect(await storedHeaders(h, e.id)).toEqual({ Authorization: values[3], "X-Tenant": values[2] });
    const unchanged = await b.post(`/console/endpoints/${e.id}/headers`, {
      _csrf: csrf,
      header_0_name: "Authorization",
      header_0_stored: "yes",
      header_0_value: "",
      header_2_name: "",
      header_2_value: "",
    });
    expect(unchanged.headers.get("location")).toBe(`/console/endpoints/${e.id}?notice=unchanged`);
    pages.push(await (await b.follow(unchanged)).text());
    expect(await storedHeaders(h, e.id)).toEqual({ Authorization: values[3], "X-Tenant": values[2] });

    for (const text of pages) for (const v of values) expect(text).not.toContain(v);
    expect(h.logLines.join("\n")).not.toContain(values[2]);
  });

  it("answers a refused header with the form again and the error, never the value, and changes nothing", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const e = await createEndpoint(h, token, { headers: { Authorization: "Bearer cv-kept-1" } });
    const csrf = await b.csrf(`/console/endpoints/${e.id}`);
    const before = h.repos.endpoints.rows.get(e.id)!.headers;
    const typed = "cv-refused-value-8e21";

    const reserved = await b.post(`/console/endpoints/${e.id}/headers`, {
      _csrf: csrf,
      header_0_name: "Authorization",
      header_0_stored: "yes",
      header_0_remove: "yes",
      header_1_name: "X-Webhook-Trace",
      header_1_value: typed,
    });
    expect(reserved.status).toBe(422);
    const text = await reserved.text();
    expect(text).toContain("That did not work.");
    expect(text).toContain("headers.X-Webhook-Trace: is set by Herald or reserved by HTTP");
    expect(text).toContain('<h2 id="h-headers">Custom headers</h2>');
    expect(text).not.toContain(typed);
    // The removal in the same form did not happen either.
    expect(h.repos.endpoints.rows.get(e.id)!.headers).toEqual(before);

    const blankNew = await b.post(`/console/endpoints/${e.id}/headers`, {
      _csrf: csrf,
      header_1_name: "X-New",
      header_1_value: "",
    });
    expect(blankNew.status).toBe(422);
    expect(await blankNew.text()).toContain("headers.X-New: needs a value: a new header cannot be blank");

    const mask = await b.post(`/console/endpoints/${e.id}/headers`, {
      _csrf: csrf,
      header_0_name: "Authorization",
      header_0_stored: "yes",
      header_0_value: "********",
    });
    expect(mask.status).toBe(422);
    expect(await mask.text()).toContain("must be the real value, not the mask");

    const noName = await b.post(`/console/endpoints/${e.id}/headers`, {
      _csrf: csrf,
      header_1_name: "",
      header_1_value: typed,
    });
    expect(noName.status).toBe(422);
    const noNameText = await noName.text();
    expect(noNameText).toContain("a value was given without a header name");
    expect(noNameText).not.toContain(typed);
    expect(h.repos.endpoints.rows.get(e.id)!.headers).toEqual(before);
  });

  it("lets a portal session edit its endpoint's headers, as it edits the other settings (ADR 11)", async () => {
    const h = await makeConsoleHarness();
    const { token } = await h.newToken();
    const e = await createEndpoint(h, token);
    const link = (await (
      await h.api(token, "/portal-sessions", {
        method: "POST",
        body: JSON.stringify({ webhook_ids: [e.id] }),
      })
    ).json()) as { url: string };
    const p = h.browser("herald_portal");
    await p.get(pathOf(link.url));
    const csrf = await p.csrf(`/portal/endpoints/${e.id}`);
    const res = await p.post(`/portal/endpoints/${e.id}/headers`, {
      _csrf: csrf,
      header_0_name: "X-Api-Key",
      header_0_value: "cv-portal-41",
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/portal/endpoints/${e.id}?notice=headers`);
    expect(await (await p.follow(res)).text()).not.toContain("cv-portal-41");
    expect(await storedHeaders(h, e.id)).toEqual({ "X-Api-Key": "cv-portal-41" });
  });
});
