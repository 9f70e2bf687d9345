import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { herald } from "../../../support/herald-cli.ts";
import { PATIENCE_MS } from "../../../support/patience.ts";
import { behaviours, verifyDelivery } from "../../../support/receiver.ts";
import { type ConsoleInChromium, foreignRequests, startConsoleInChromium } from "./browser-harness.ts";

// A person's way through the console in Chromium (browser-harness.ts): sign in, an endpoint, its failed
// and retried deliveries, a rotation, a recovery, the one-time link, another project, a forged POST, the
// portal. The cases run in order and share one page. Destinations of other kinds: browser-destinations.test.ts.

let c: ConsoleInChromium;

beforeAll(async () => {
  c = await startConsoleInChromium();
});

afterAll(async () => {
  await c?.close();
});

describe("the console in Chromium", () => {
  let page: Page;
  let endpointId: string;
  let secret: string;
  let failedDeliveryPath: string;

  it("signs in with a pasted token; the token is kept nowhere in the page or its storage", async () => {
    page = await c.newPage();
    await page.goto(`${c.server.baseUrl}/console`);
    expect(new URL(page.url()).pathname).toBe("/console/sign-in");
    await c.shot(page, "sign-in");
    await c.signIn(page, c.tokenA);
    expect(new URL(page.url()).pathname).toBe("/console");
    expect(page.url()).not.toContain(c.tokenA);
    expect(await page.content()).not.toContain(c.tokenA);
    const stored = await page.evaluate(
      () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie,
    );
    expect(stored).not.toContain("hrld_");
    const [cookie] = await page.context().cookies();
    expect(cookie).toMatchObject({
      name: "herald_console",
      httpOnly: true,
      sameSite: "Strict",
      path: "/console",
    });
    await expect(page.getByText("No endpoints yet.")).toBeDefined();
    await page.getByText("No endpoints yet.").waitFor();
    // Keyboard first: the first Tab reaches "Skip to content", and focus is visible.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).toBe("solid");
    await c.shot(page, "overview-empty");
  });

  it("creates an endpoint and shows its secret once, with a copy button", async () => {
    await page.getByRole("link", { name: "New endpoint" }).first().click();
    // By id: the form also has a Kafka, RabbitMQ and SQS fieldset, with a "Server URL" and a "Queue URL".
    await page.locator("#url").fill(c.receiver.url);
    await page.getByLabel("message.delivered").check();
    await c.shot(page, "endpoint-new");
    await page.getByRole("button", { name: "Create endpoint" }).click();
    secret = (await page.locator("#secret").textContent())?.trim() ?? "";
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole("button", { name: "Copy" }).waitFor();
    await c.shot(page, "endpoint-secret");
    await page.getByRole("link", { name: "Continue to the endpoint" }).click();
    endpointId = new URL(page.url()).pathname.split("/").pop() ?? "";
    expect(await page.content()).not.toContain(secret);
    await c.shot(page, "endpoint");
  });

  it("shows a new attempt live, without a reload, and why it failed", async () => {
    await page.goto(`${c.server.baseUrl}/console/live`);
    await page.getByText("Live: new attempts appear").waitFor();
    const navigations: string[] = [];
    page.on("framenavigated", (f) => navigations.push(f.url()));
    await c.publish(c.tokenA);
    const row = page.locator("#live-feed tbody tr", { has: page.locator(".s-failed") });
    await row.first().waitFor();
    expect(navigations).toEqual([]);
    await c.shot(page, "live");
    await row
      .first()
      .getByRole("link", { name: /Details/ })
      .click();
    failedDeliveryPath = new URL(page.url()).pathname;
    await page.getByText("http_status").first().waitFor();
    expect(await page.locator("main").textContent()).toContain("receiver is down");
    expect(await page.locator("main").textContent()).toContain("X-Webhook-Signature: v1=");
    expect(await page.content()).not.toContain(secret);
    // Times are shown in the viewer's zone; the UTC value is on hover.
    expect(await page.locator("time").first().getAttribute("title")).toMatch(/Z \(UTC\)$/);
    await c.shot(page, "delivery-failed");
  });

  it("retries the delivery once the receiver is fixed, and the retry succeeds, signed", async () => {
    c.receiver.setBehaviour(behaviours.status(200, "ok"));
    await page.getByRole("button", { name: "Retry now" }).click();
    await page.getByText("Retry queued").waitFor();
    const deadline = Date.now() + PATIENCE_MS;
    while (!(await page.locator("dl.props .s-succeeded").count()) && Date.now() < deadline) {
      await page.waitForTimeout(250);
      await page.reload();
    }
    expect(await page.locator("dl.props .s-succeeded").count()).toBe(1);
    expect(await page.locator("ol.timeline li").count()).toBe(2);
    const [, second] = await c.receiver.waitFor(2);
    expect(verifyDelivery(second!.headers, second!.body, [secret], Math.floor(Date.now() / 1000)).ok).toBe(
      true,
    );
    await c.shot(page, "delivery-retried");
  });

  it("filters deliveries by status, linkably", async () => {
    await page.goto(`${c.server.baseUrl}/console/deliveries`);
    await page.getByLabel("Status").selectOption("failed");
    await page.getByRole("button", { name: "Filter" }).click();
    expect(new URL(page.url()).searchParams.get("status")).toBe("failed");
    expect(await page.locator("tbody tr").count()).toBe(1);
    await page.goto(`${c.server.baseUrl}/console/deliveries?status=succeeded&webhook_id=${endpointId}`);
    expect(await page.locator("tbody tr").count()).toBe(1);
    await page.goto(`${c.server.baseUrl}/console/deliveries?status=cancelled`);
    await page.getByText("No deliveries match these filters").waitFor();
    await page.goto(`${c.server.baseUrl}/console/deliveries`);
    expect(await page.locator("tbody tr").count()).toBe(2);
    await c.shot(page, "deliveries");
  });

  it("rotates the secret with a grace period; the new one is shown once", async () => {
    await page.goto(`${c.server.baseUrl}/console/endpoints/${endpointId}`);
    await page.getByLabel("Keep the old secret signing for").selectOption("3600");
    await page.getByRole("button", { name: "Rotate secret" }).click();
    const fresh = (await page.locator("#secret").textContent())?.trim() ?? "";
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(secret);
    await c.shot(page, "endpoint-rotated");
    secret = fresh;
  });

  it("recovers a window after an outage", async () => {
    c.receiver.setBehaviour(behaviours.status(503, "maintenance"));
    await c.publish(c.tokenA);
    await c.receiver.waitFor(3);
    // The attempt is recorded after the answer: wait for the failure to be listed.
    const deadline = Date.now() + PATIENCE_MS;
    for (;;) {
      await page.goto(`${c.server.baseUrl}/console/deliveries?status=failed`);
      if ((await page.locator("tbody tr").count()) === 2 || Date.now() > deadline) break;
      await page.waitForTimeout(250);
    }
    c.receiver.setBehaviour(behaviours.status(200, "ok"));
    await page.goto(`${c.server.baseUrl}/console/endpoints/${endpointId}`);
    await page.getByLabel("Since").fill("1h");
    await page.getByRole("button", { name: "Re-send failed and skipped" }).click();
    await page.getByText("1 delivery was queued again").waitFor();
    await c.shot(page, "recovered");
    const [, , , fourth] = await c.receiver.waitFor(4);
    expect(verifyDelivery(fourth!.headers, fourth!.body, [secret], Math.floor(Date.now() / 1000)).ok).toBe(
      true,
    );
  });

  it("shows an event's envelope and every endpoint it went to, and the event catalog", async () => {
    await page.goto(`${c.server.baseUrl}/console/deliveries`);
    await page
      .locator("tbody tr")
      .first()
      .getByRole("link", { name: "message.delivered", exact: true })
      .click();
    await page.getByRole("heading", { name: "Envelope" }).waitFor();
    expect(await page.locator("#envelope").textContent()).toContain('"type": "message.delivered"');
    await c.shot(page, "event");
    await page.getByRole("link", { name: "Event catalog" }).click();
    // The 19 published types and the 4 operational ones (ADR 20).
    expect(await page.locator("section h2").count()).toBe(23);
    expect(await page.locator("section h2").last().textContent()).toBe("delivery.exhausted");
    await c.shot(page, "catalog");
    await page.getByRole("link", { name: "Overview" }).click();
    await page.locator("svg[role=img]").waitFor();
    await c.shot(page, "overview");
    const dark = await c.newPage({ colorScheme: "dark" });
    await c.signIn(dark, c.tokenA);
    await c.shot(dark, "overview-dark");
  });

  it("signs in from a one-time `herald console` link, which works only once", async () => {
    const r = await herald(["console", "--json"], { HERALD_URL: c.server.baseUrl, HERALD_TOKEN: c.tokenA });
    expect(r.code).toBe(0);
    const { url } = JSON.parse(r.stdout) as { url: string };
    const p = await c.newPage();
    await p.goto(url);
    await p.getByRole("heading", { name: "Overview" }).waitFor();
    expect(p.url()).toBe(`${c.server.baseUrl}/console`);
    const again = await c.newPage();
    const res = await again.goto(url);
    expect(res?.status()).toBe(401);
    await again.getByText("This sign-in link has expired").waitFor();
  });

  it("shows another project's token nothing of the first's", async () => {
    const b = await c.newPage();
    await c.signIn(b, c.tokenB);
    expect(await b.content()).not.toContain(c.receiver.url);
    const res = await b.goto(`${c.server.baseUrl}/console/endpoints/${endpointId}`);
    expect(res?.status()).toBe(404);
    const d = await b.goto(`${c.server.baseUrl}${failedDeliveryPath}`);
    expect(d?.status()).toBe(404);
    await b.goto(`${c.server.baseUrl}/console/deliveries`);
    await b.getByText("No deliveries yet.").waitFor();
  });

  it("refuses a forged cross-site POST", async () => {
    // A page on another site (localhost vs 127.0.0.1) that posts a form to the console on load.
    const evil = http.createServer((_req, res) => {
      res.setHeader("Content-Type", "text/html");
      res.end(`<form id="f" method="post" action="${c.server.baseUrl}/console/endpoints/${endpointId}/disable">
<input name="_csrf" value="guessed"></form><script>document.getElementById("f").submit()</script>`);
    });
    await new Promise<void>((r) => evil.listen(0, "127.0.0.1", r));
    try {
      const port = (evil.address() as AddressInfo).port;
      const answered = page.waitForResponse((r) => r.url().endsWith("/disable"));
      await page.goto(`http://localhost:${port}/`);
      const res = await answered;
      expect([401, 403]).toContain(res.status());
      const e = await c.api<{ enabled: boolean }>(c.tokenA, "GET", `/webhooks/${endpointId}`);
      expect(e.enabled).toBe(true);
    } finally {
      await new Promise((r) => evil.close(r));
    }
  });

  it("opens a customer portal limited to one endpoint; it cannot reach the other, and a revoked link is refused", async () => {
    const other = await c.api<{ id: string }>(c.tokenA, "POST", "/webhooks", {
      url: `${c.receiver.origin}/other`,
      events: ["domain.verified"],
      description: "another customer's",
    });
    const link = await c.api<{ id: string; url: string }>(c.tokenA, "POST", "/portal-sessions", {
      webhook_ids: [endpointId],
      expires_in: 600,
    });
    const p = await c.newPage();
    const entered = await p.goto(link.url);
    expect(entered?.headers()["content-security-policy"]).toContain(
      "frame-ancestors https://app.example.com",
    );
    expect(new URL(p.url()).pathname).toBe("/portal");
    expect(await p.content()).toContain(endpointId);
    expect(await p.content()).not.toContain(other.id);
    await c.shot(p, "portal");
    await p.getByRole("link", { name: "Deliveries" }).click();
    expect(await p.locator("tbody tr").count()).toBeGreaterThan(0);
    await c.shot(p, "portal-deliveries");
    expect((await p.goto(`${c.server.baseUrl}/portal/endpoints/${other.id}`))?.status()).toBe(404);
    expect((await p.goto(`${c.server.baseUrl}/console`))?.url()).toContain("/console/sign-in");

    await c.api(c.tokenA, "DELETE", `/portal-sessions/${link.id}`);
    const after = await p.goto(`${c.server.baseUrl}/portal`);
    expect(after?.status()).toBe(401);
    await p.getByText("This link has expired or was revoked").waitFor();
    const reopened = await (await c.newPage()).goto(link.url);
    expect(reopened?.status()).toBe(401);
  });

  it("made no request to any host but Herald's", () => {
    expect(c.requested.length).toBeGreaterThan(20);
    expect(foreignRequests(c)).toEqual([]);
  });
});
