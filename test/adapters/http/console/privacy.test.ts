import { describe, expect, it } from "vitest";
import { makeConsoleHarness, pathOf } from "./console-harness.ts";

type Harness = Awaited<ReturnType<typeof makeConsoleHarness>>;

async function setup() {
  const h = await makeConsoleHarness();
  const { b, token } = await h.signedIn();
  const hook = await h.api(token, "/webhooks", {
    method: "POST",
    body: JSON.stringify({ url: "http://127.0.0.1:9/hook", events: ["message.delivered"] }),
  });
  expect(hook.status).toBe(201);
  const webhook = (await hook.json()) as { id: string };
  return { h, b, token, webhook };
}

async function publish(h: Harness, token: string, messageId: string, recipient = "ada@example.com") {
  const res = await h.api(token, "/events", {
    method: "POST",
    body: JSON.stringify({
      type: "message.delivered",
      data: {
        message_id: messageId,
        status: "delivered",
        channel: "email",
        message_type: "transactional",
        recipient,
      },
    }),
  });
  expect(res.status).toBe(202);
  return (await res.json()) as { id: string };
}

describe("console: privacy", () => {
  it("erases a subject from the Privacy page; its event and the records' bodies are gone, and they cannot be retried", async () => {
    const { h, b, token, webhook } = await setup();
    const messageId = crypto.randomUUID();
    const event = await publish(h, token, messageId);
    const [record] = (
      (await (await h.api(token, `/webhooks/${webhook.id}/deliveries`)).json()) as { data: { id: string }[] }
    ).data;
    // A body the receiver sent back, as if an attempt had been made.
    const stored = h.repos.deliveries.rows.get(record!.id)!;
    stored.responseBody = "unknown mailbox ada@example.com";

    const page = await b.get("/console/privacy");
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('aria-current="page">Privacy</a>');
    expect(html).toContain("kept for <strong>30d</strong>");
    const csrf = await b.csrf("/console/privacy");

    // Without the confirmation nothing happens.
    const unconfirmed = await b.post("/console/privacy/erase", { _csrf: csrf, resource_id: messageId });
    expect(unconfirmed.status).toBe(422);
    expect((await h.api(token, `/events/${event.id}`)).status).toBe(200);

    const erased = await b.post("/console/privacy/erase", {
      _csrf: csrf,
      resource_id: messageId,
      confirm: "yes",
    });
    expect(erased.status).toBe(303);
    const result = await (await b.follow(erased)).text();
    expect(result).toContain("Erased 1 event and 1 delivery record (1 pending, now cancelled).");
    expect(result).toContain(`<code>${messageId}</code>`);
    expect((await h.api(token, `/events/${event.id}`)).status).toBe(404);
    expect((await b.get(`/console/events/${event.id}`)).status).toBe(404);

    const detail = await (await b.get(`/console/deliveries/${record!.id}`)).text();
    expect(detail).toContain("Erased <time");
    expect(detail).toContain("cancelled before it was sent");
    expect(detail).toContain("Removed by the erasure.");
    expect(detail).toContain("The event was erased.");
    expect(detail).not.toContain("ada@example.com");
    expect(detail).not.toContain("Retry now");
    const retried = await b.post(`/console/deliveries/${record!.id}/retry`, { _csrf: csrf });
    expect(retried.status).toBe(409);
    expect(await retried.text()).toContain("erased");
    const list = await (await b.get("/console/deliveries")).text();
    expect(list).toMatch(/s-cancelled">cancelled<\/span> <span class="muted small">erased<\/span>/);
  });

  it("erases by recipient and never shows the address it was given", async () => {
    const { h, b, token } = await setup();
    const event = await publish(h, token, crypto.randomUUID(), "Grace@Example.com");
    const csrf = await b.csrf("/console/privacy");
    const res = await b.post("/console/privacy/erase", {
      _csrf: csrf,
      recipient: "grace@example.com",
      confirm: "yes",
    });
    expect(res.status).toBe(303);
    const html = await (await b.follow(res)).text();
    expect(html).toContain("Erased 1 event");
    expect(html).toContain("<td>a recipient</td>");
    expect(html.toLowerCase()).not.toContain("grace");
    expect((await h.api(token, `/events/${event.id}`)).status).toBe(404);
  });

  it("saves a shorter retention, refuses a longer one with the reason, and an empty field follows the server again", async () => {
    const { h, b, token } = await setup();
    const csrf = await b.csrf("/console/privacy");
    const saved = await b.post("/console/privacy/retention", { _csrf: csrf, retention: "7d" });
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe("/console/privacy?notice=retention");
    const after = await (await b.get("/console/privacy?notice=retention")).text();
    expect(after).toContain("Retention saved");
    expect(after).toContain("kept for <strong>7d</strong>");
    expect(((await (await h.api(token, "/settings")).json()) as { retention: string }).retention).toBe("7d");

    const tooLong = await b.post("/console/privacy/retention", { _csrf: csrf, retention: "90d" });
    expect(tooLong.status).toBe(422);
    expect(await tooLong.text()).toContain("retention: must be at most 30d");
    expect(((await (await h.api(token, "/settings")).json()) as { retention: string }).retention).toBe("7d");

    expect((await b.post("/console/privacy/retention", { _csrf: csrf, retention: "" })).status).toBe(303);
    expect(((await (await h.api(token, "/settings")).json()) as { retention: null }).retention).toBeNull();
  });

  it("is the console's only: a customer portal has no Privacy page, and a form without the CSRF token is refused", async () => {
    const { h, b, token } = await setup();
    const link = (await (await h.api(token, "/portal-sessions", { method: "POST", body: "{}" })).json()) as {
      url: string;
    };
    const p = h.browser("herald_portal");
    await p.get(pathOf(link.url));
    const home = await (await p.get("/portal")).text();
    expect(home).not.toContain("Privacy");
    expect((await p.get("/portal/privacy")).status).toBe(404);
    const portalCsrf = await p.csrf("/portal");
    expect(
      (
        await p.post("/portal/privacy/erase", {
          _csrf: portalCsrf,
          resource_id: crypto.randomUUID(),
          confirm: "yes",
        })
      ).status,
    ).toBe(404);
    expect((await b.post("/console/privacy/retention", { retention: "1d" })).status).toBe(403);
    expect(((await (await h.api(token, "/settings")).json()) as { retention: null }).retention).toBeNull();
  });
});
