import { mkdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { herald, parseCreated, TEST_MASTER_KEY } from "../../../support/herald-cli.ts";
import { type HeraldProcess, startHerald } from "../../../support/herald-process.ts";
import { PATIENCE_MS } from "../../../support/patience.ts";
import { behaviours, type Receiver, startReceiver, verifyDelivery } from "../../../support/receiver.ts";
import { freshStore } from "../../../support/store.ts";

// The console as a person uses it: Debian's Chromium, driven by playwright-core, against a real Herald
// process on the run's database and a real receiver. Every page is saved as a screenshot.

const CHROMIUM = process.env.HERALD_CHROMIUM ?? "/usr/bin/chromium";
const SHOTS = resolve(process.env.HERALD_SCREENSHOTS ?? join(import.meta.dirname, ".screenshots"));
const store = await freshStore("herald_console");
const env = { ...store.env, HERALD_MASTER_KEY: TEST_MASTER_KEY };

let server: HeraldProcess;
let receiver: Receiver;
let browser: Browser;
let tokenA: string;
let tokenB: string;
/** Every URL a console page asked for, to prove it talks to no other host. */
const requested: string[] = [];
const contexts: BrowserContext[] = [];

async function newPage(options: { colorScheme?: "light" | "dark" } = {}): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  contexts.push(context);
  // Playwright's own 30 s for every wait and action becomes the suite's patience (a loaded machine is slow, not broken).
  context.setDefaultTimeout(PATIENCE_MS);
  const page = await context.newPage();
  page.on("request", (r) => requested.push(r.url()));
  return page;
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

async function signIn(page: Page, token: string): Promise<void> {
  await page.goto(`${server.baseUrl}/console`);
  await page.getByLabel("API token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
}

async function api<T>(token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${server.baseUrl}/api/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (res.status === 204 ? null : await res.json()) as T;
}

const publish = (token: string) =>
  api<{ id: string }>(token, "POST", "/events", {
    type: "message.delivered",
    data: {
      message_id: crypto.randomUUID(),
      status: "delivered",
      channel: "email",
      message_type: "transactional",
      recipient: "ada@example.com",
    },
  });

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  receiver = await startReceiver({ secrets: [], behaviour: behaviours.status(500, "receiver is down") });
  server = await startHerald({
    env: {
      ...env,
      HERALD_ALLOW_HTTP_URLS: "true",
      // No automatic retries: a failed attempt stays the latest until someone acts.
      HERALD_RETRY_SCHEDULE: "none",
      HERALD_PORTAL_FRAME_ANCESTORS: "https://app.example.com",
    },
  });
  tokenA = parseCreated(await herald(["tokens", "create", "--name", "a", "--json"], env)).token;
  tokenB = parseCreated(await herald(["tokens", "create", "--name", "b", "--json"], env)).token;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await server?.stop();
  await receiver?.close();
  await store.cleanup();
});

describe("the console in Chromium", () => {
  let page: Page;
  let endpointId: string;
  let secret: string;
  let failedDeliveryPath: string;

  it("signs in with a pasted token; the token is kept nowhere in the page or its storage", async () => {
    page = await newPage();
    await page.goto(`${server.baseUrl}/console`);
    expect(new URL(page.url()).pathname).toBe("/console/sign-in");
    await shot(page, "sign-in");
    await signIn(page, tokenA);
    expect(new URL(page.url()).pathname).toBe("/console");
    expect(page.url()).not.toContain(tokenA);
    expect(await page.content()).not.toContain(tokenA);
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
    await shot(page, "overview-empty");
  });

  it("creates an endpoint and shows its secret once, with a copy button", async () => {
    await page.getByRole("link", { name: "New endpoint" }).first().click();
    // By id: the form also has a Kafka, RabbitMQ and SQS fieldset, with a "Server URL" and a "Queue URL".
    await page.locator("#url").fill(receiver.url);
    await page.getByLabel("message.delivered").check();
    await shot(page, "endpoint-new");
    await page.getByRole("button", { name: "Create endpoint" }).click();
    secret = (await page.locator("#secret").textContent())?.trim() ?? "";
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole("button", { name: "Copy" }).waitFor();
    await shot(page, "endpoint-secret");
    await page.getByRole("link", { name: "Continue to the endpoint" }).click();
    endpointId = new URL(page.url()).pathname.split("/").pop() ?? "";
    expect(await page.content()).not.toContain(secret);
    await shot(page, "endpoint");
  });

  it("shows a new attempt live, without a reload, and why it failed", async () => {
    await page.goto(`${server.baseUrl}/console/live`);
    await page.getByText("Live: new attempts appear").waitFor();
    const navigations: string[] = [];
    page.on("framenavigated", (f) => navigations.push(f.url()));
    await publish(tokenA);
    const row = page.locator("#live-feed tbody tr", { has: page.locator(".s-failed") });
    await row.first().waitFor();
    expect(navigations).toEqual([]);
    await shot(page, "live");
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
    await shot(page, "delivery-failed");
  });

  it("retries the delivery once the receiver is fixed, and the retry succeeds, signed", async () => {
    receiver.setBehaviour(behaviours.status(200, "ok"));
    await page.getByRole("button", { name: "Retry now" }).click();
    await page.getByText("Retry queued").waitFor();
    const deadline = Date.now() + PATIENCE_MS;
    while (!(await page.locator("dl.props .s-succeeded").count()) && Date.now() < deadline) {
      await page.waitForTimeout(250);
      await page.reload();
    }
    expect(await page.locator("dl.props .s-succeeded").count()).toBe(1);
    expect(await page.locator("ol.timeline li").count()).toBe(2);
    const [, second] = await receiver.waitFor(2);
    expect(verifyDelivery(second!.headers, second!.body, [secret], Math.floor(Date.now() / 1000)).ok).toBe(
      true,
    );
    await shot(page, "delivery-retried");
  });

  it("filters deliveries by status, linkably", async () => {
    await page.goto(`${server.baseUrl}/console/deliveries`);
    await page.getByLabel("Status").selectOption("failed");
    await page.getByRole("button", { name: "Filter" }).click();
    expect(new URL(page.url()).searchParams.get("status")).toBe("failed");
    expect(await page.locator("tbody tr").count()).toBe(1);
    await page.goto(`${server.baseUrl}/console/deliveries?status=succeeded&webhook_id=${endpointId}`);
    expect(await page.locator("tbody tr").count()).toBe(1);
    await page.goto(`${server.baseUrl}/console/deliveries?status=cancelled`);
    await page.getByText("No deliveries match these filters").waitFor();
    await page.goto(`${server.baseUrl}/console/deliveries`);
    expect(await page.locator("tbody tr").count()).toBe(2);
    await shot(page, "deliveries");
  });

  it("rotates the secret with a grace period; the new one is shown once", async () => {
    await page.goto(`${server.baseUrl}/console/endpoints/${endpointId}`);
    await page.getByLabel("Keep the old secret signing for").selectOption("3600");
    await page.getByRole("button", { name: "Rotate secret" }).click();
    const fresh = (await page.locator("#secret").textContent())?.trim() ?? "";
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(secret);
    await shot(page, "endpoint-rotated");
    secret = fresh;
  });

  it("recovers a window after an outage", async () => {
    receiver.setBehaviour(behaviours.status(503, "maintenance"));
    await publish(tokenA);
    await receiver.waitFor(3);
    // The attempt is recorded after the answer: wait for the failure to be listed.
    const deadline = Date.now() + PATIENCE_MS;
    for (;;) {
      await page.goto(`${server.baseUrl}/console/deliveries?status=failed`);
      if ((await page.locator("tbody tr").count()) === 2 || Date.now() > deadline) break;
      await page.waitForTimeout(250);
    }
    receiver.setBehaviour(behaviours.status(200, "ok"));
    await page.goto(`${server.baseUrl}/console/endpoints/${endpointId}`);
    await page.getByLabel("Since").fill("1h");
    await page.getByRole("button", { name: "Re-send failed and skipped" }).click();
    await page.getByText("1 delivery was queued again").waitFor();
    await shot(page, "recovered");
    const [, , , fourth] = await receiver.waitFor(4);
    expect(verifyDelivery(fourth!.headers, fourth!.body, [secret], Math.floor(Date.now() / 1000)).ok).toBe(
      true,
    );
  });

  it("shows an event's envelope and every endpoint it went to, and the event catalog", async () => {
    await page.goto(`${server.baseUrl}/console/deliveries`);
    await page
      .locator("tbody tr")
      .first()
      .getByRole("link", { name: "message.delivered", exact: true })
      .click();
    await page.getByRole("heading", { name: "Envelope" }).waitFor();
    expect(await page.locator("#envelope").textContent()).toContain('"type": "message.delivered"');
    await shot(page, "event");
    await page.getByRole("link", { name: "Event catalog" }).click();
    // The 19 published types and the 4 operational ones (ADR 20).
    expect(await page.locator("section h2").count()).toBe(23);
    expect(await page.locator("section h2").last().textContent()).toBe("delivery.exhausted");
    await shot(page, "catalog");
    await page.getByRole("link", { name: "Overview" }).click();
    await page.locator("svg[role=img]").waitFor();
    await shot(page, "overview");
    const dark = await newPage({ colorScheme: "dark" });
    await signIn(dark, tokenA);
    await shot(dark, "overview-dark");
  });

  it("signs in from a one-time `herald console` link, which works only once", async () => {
    const r = await herald(["console", "--json"], { HERALD_URL: server.baseUrl, HERALD_TOKEN: tokenA });
    expect(r.code).toBe(0);
    const { url } = JSON.parse(r.stdout) as { url: string };
    const p = await newPage();
    await p.goto(url);
    await p.getByRole("heading", { name: "Overview" }).waitFor();
    expect(p.url()).toBe(`${server.baseUrl}/console`);
    const again = await newPage();
    const res = await again.goto(url);
    expect(res?.status()).toBe(401);
    await again.getByText("This sign-in link has expired").waitFor();
  });

  it("shows another project's token nothing of the first's", async () => {
    const b = await newPage();
    await signIn(b, tokenB);
    expect(await b.content()).not.toContain(receiver.url);
    const res = await b.goto(`${server.baseUrl}/console/endpoints/${endpointId}`);
    expect(res?.status()).toBe(404);
    const d = await b.goto(`${server.baseUrl}${failedDeliveryPath}`);
    expect(d?.status()).toBe(404);
    await b.goto(`${server.baseUrl}/console/deliveries`);
    await b.getByText("No deliveries yet.").waitFor();
  });

  it("refuses a forged cross-site POST", async () => {
    // A page on another site (localhost vs 127.0.0.1) that posts a form to the console on load.
    const evil = http.createServer((_req, res) => {
      res.setHeader("Content-Type", "text/html");
      res.end(`<form id="f" method="post" action="${server.baseUrl}/console/endpoints/${endpointId}/disable">
<input name="_csrf" value="guessed"></form><script>document.getElementById("f").submit()</script>`);
    });
    await new Promise<void>((r) => evil.listen(0, "127.0.0.1", r));
    try {
      const port = (evil.address() as AddressInfo).port;
      const answered = page.waitForResponse((r) => r.url().endsWith("/disable"));
      await page.goto(`http://localhost:${port}/`);
      const res = await answered;
      expect([401, 403]).toContain(res.status());
      const e = await api<{ enabled: boolean }>(tokenA, "GET", `/webhooks/${endpointId}`);
      expect(e.enabled).toBe(true);
    } finally {
      await new Promise((r) => evil.close(r));
    }
  });

  it("opens a customer portal limited to one endpoint; it cannot reach the other, and a revoked link is refused", async () => {
    const other = await api<{ id: string }>(tokenA, "POST", "/webhooks", {
      url: `${receiver.origin}/other`,
      events: ["domain.verified"],
      description: "another customer's",
    });
    const link = await api<{ id: string; url: string }>(tokenA, "POST", "/portal-sessions", {
      webhook_ids: [endpointId],
      expires_in: 600,
    });
    const p = await newPage();
    const entered = await p.goto(link.url);
    expect(entered?.headers()["content-security-policy"]).toContain(
      "frame-ancestors https://app.example.com",
    );
    expect(new URL(p.url()).pathname).toBe("/portal");
    expect(await p.content()).toContain(endpointId);
    expect(await p.content()).not.toContain(other.id);
    await shot(p, "portal");
    await p.getByRole("link", { name: "Deliveries" }).click();
    expect(await p.locator("tbody tr").count()).toBeGreaterThan(0);
    await shot(p, "portal-deliveries");
    expect((await p.goto(`${server.baseUrl}/portal/endpoints/${other.id}`))?.status()).toBe(404);
    expect((await p.goto(`${server.baseUrl}/console`))?.url()).toContain("/console/sign-in");

    await api(tokenA, "DELETE", `/portal-sessions/${link.id}`);
    const after = await p.goto(`${server.baseUrl}/portal`);
    expect(after?.status()).toBe(401);
    await p.getByText("This link has expired or was revoked").waitFor();
    const reopened = await (await newPage()).goto(link.url);
    expect(reopened?.status()).toBe(401);
  });

  it("creates a Kafka endpoint through the form: a bad topic is shown beside it, the password is typed again, never shown", async () => {
    const password = "browser-sasl-pw-3e8b";
    const p = await newPage();
    await signIn(p, tokenA);
    await p.goto(`${server.baseUrl}/console/endpoints/new`);
    // The script shows the chosen kind's boxes alone: HTTPS first, then Kafka's once it is chosen.
    expect(await p.locator("#kafka_topic").isVisible()).toBe(false);
    await p.getByRole("radio", { name: /Apache Kafka/ }).check();
    expect(await p.locator("#url").isVisible()).toBe(false);
    await p.locator("#kafka_brokers").fill("127.0.0.1:1\n127.0.0.1:2");
    await p.locator("#kafka_topic").fill("bad topic");
    await p.locator("#kafka_sasl_mechanism").selectOption("scram-sha-256");
    await p.locator("#kafka_sasl_username").fill("herald");
    await p.locator("#kafka_sasl_password").fill(password);
    // domain.verified: nothing this file publishes, so no delivery goes to the unreachable brokers.
    await p.getByLabel("domain.verified").check();
    await p.getByRole("button", { name: "Create endpoint" }).click();
    await p.locator("#kafka_topic-error").waitFor();
    expect(await p.locator("#kafka_topic-error").textContent()).toContain("must be 1-249 of letters");
    expect(await p.getByRole("radio", { name: /Apache Kafka/ }).isChecked()).toBe(true);
    expect(await p.locator("#kafka_sasl_password").inputValue()).toBe("");
    expect(await p.content()).not.toContain(password);
    await shot(p, "endpoint-new-kafka-error");
    await p.locator("#kafka_topic").fill("orders");
    await p.locator("#kafka_sasl_password").fill(password);
    await p.getByRole("button", { name: "Create endpoint" }).click();
    expect((await p.locator("#secret").textContent())?.trim()).toMatch(/^whsec_/);
    await p.getByRole("link", { name: "Continue to the endpoint" }).click();
    await p.getByRole("heading", { name: "Destination" }).waitFor();
    const main = (await p.locator("main").textContent()) ?? "";
    expect(main).toContain("kafka://127.0.0.1:1,127.0.0.1:2/orders");
    expect(main).toContain("scram-sha-256, user herald, password ********");
    expect(await p.content()).not.toContain(password);
    await shot(p, "endpoint-kafka");
    const id = new URL(p.url()).pathname.split("/").pop() ?? "";
    const made = await api<{ kind: string; kafka: { topic: string } }>(tokenA, "GET", `/webhooks/${id}`);
    expect([made.kind, made.kafka.topic]).toEqual(["kafka", "orders"]);
  });

  it("made no request to any host but Herald's", () => {
    const foreign = requested.filter(
      (u) => new URL(u).origin !== server.baseUrl && !u.startsWith("http://localhost:"),
    );
    expect(requested.length).toBeGreaterThan(20);
    expect(foreign).toEqual([]);
  });
});
