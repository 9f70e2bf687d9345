import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { deliveredEvent } from "../../../support/engine-harness.ts";
import { herald, parseCreated, TEST_MASTER_KEY } from "../../../support/herald-cli.ts";
import { type HeraldProcess, startHerald } from "../../../support/herald-process.ts";
import { PATIENCE_MS } from "../../../support/patience.ts";
import { behaviours, type Receiver, startReceiver } from "../../../support/receiver.ts";
import { type FreshStore, freshStore } from "../../../support/store.ts";

// The console as a person uses it: Debian's Chromium, driven by playwright-core, against a real Herald
// process on the run's database and a real receiver. Every page is saved as a screenshot. One of these
// per browser test file (browser*.test.ts).

const CHROMIUM = process.env.HERALD_CHROMIUM ?? "/usr/bin/chromium";
const SHOTS = resolve(process.env.HERALD_SCREENSHOTS ?? join(import.meta.dirname, ".screenshots"));

export interface ConsoleInChromium {
  server: HeraldProcess;
  /** Answers 500 "receiver is down" until a test changes its behaviour. */
  receiver: Receiver;
  /** Project A's token, and project B's: B must see nothing of A's. */
  tokenA: string;
  tokenB: string;
  /** Every URL a console page asked for, to prove it talks to no other host. */
  requested: string[];
  newPage(options?: { colorScheme?: "light" | "dark" }): Promise<Page>;
  shot(page: Page, name: string): Promise<void>;
  signIn(page: Page, token: string): Promise<void>;
  /** The REST API, as a token; throws on an answer that is not 2xx. */
  api<T>(token: string, method: string, path: string, body?: unknown): Promise<T>;
  /** Publishes a message.delivered event as the token. */
  publish(token: string): Promise<{ id: string }>;
  close(): Promise<void>;
}

/** A fresh database, a receiver, a Herald process on both, two projects' tokens and Chromium. */
export async function startConsoleInChromium(): Promise<ConsoleInChromium> {
  mkdirSync(SHOTS, { recursive: true });
  const requested: string[] = [];
  const contexts: BrowserContext[] = [];
  let store: FreshStore | undefined;
  let receiver: Receiver | undefined;
  let server: HeraldProcess | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await server?.stop();
    await receiver?.close();
    await store?.cleanup();
  };
  try {
    store = await freshStore("herald_console");
    const env = { ...store.env, HERALD_MASTER_KEY: TEST_MASTER_KEY };
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
    const tokenA = parseCreated(await herald(["tokens", "create", "--name", "a", "--json"], env)).token;
    const tokenB = parseCreated(await herald(["tokens", "create", "--name", "b", "--json"], env)).token;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    const running = { server, browser };

    const api = async <T>(token: string, method: string, path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${running.server.baseUrl}/api/v1${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return (res.status === 204 ? null : await res.json()) as T;
    };

    return {
      server,
      receiver,
      tokenA,
      tokenB,
      requested,
      async newPage(options = {}) {
        const context = await running.browser.newContext({
          viewport: { width: 1280, height: 900 },
          ...options,
        });
        contexts.push(context);
        // Playwright's own 30 s for every wait and action becomes the suite's patience (a loaded machine is slow, not broken).
        context.setDefaultTimeout(PATIENCE_MS);
        const page = await context.newPage();
        page.on("request", (r) => requested.push(r.url()));
        return page;
      },
      async shot(page, name) {
        await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
      },
      async signIn(page, token) {
        await page.goto(`${running.server.baseUrl}/console`);
        await page.getByLabel("API token").fill(token);
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByRole("heading", { name: "Overview" }).waitFor();
      },
      api,
      publish: (token) => api<{ id: string }>(token, "POST", "/events", deliveredEvent()),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The URLs of `requested` that went to a host other than Herald's (the forged-POST page is on localhost). */
export function foreignRequests(c: ConsoleInChromium): string[] {
  return c.requested.filter(
    (u) => new URL(u).origin !== c.server.baseUrl && !u.startsWith("http://localhost:"),
  );
}
