import { describe, expect, it } from "vitest";
import { makeConsoleHarness } from "./console-harness.ts";
import { createEndpoint, HOOK, publish } from "./routes-support.ts";

// An endpoint's state and settings in the console: enable, disable, delete; its filter, rate limit and ordering.

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
