import { createAesGcmCipher } from "../../../../src/adapters/crypto/aes-gcm-cipher.ts";
import { createCertificateReader } from "../../../../src/adapters/crypto/client-certificates.ts";
import { createSubjectKeys } from "../../../../src/adapters/crypto/subject-keys.ts";
import { createHttpApp } from "../../../../src/adapters/http/app.ts";
import type { HttpApp } from "../../../../src/adapters/http/env.ts";
import { createJsonLogger } from "../../../../src/adapters/json-logger.ts";
import { createMemoryInsights, MemoryConsoleSessions } from "../../../../src/adapters/memory/console.ts";
import { createMemoryRepositories } from "../../../../src/adapters/memory/repositories.ts";
import { systemIds } from "../../../../src/adapters/system.ts";
import { consoleUseCases } from "../../../../src/app/console.ts";
import { consoleInsights } from "../../../../src/app/console-insights.ts";
import { deliveryUseCases } from "../../../../src/app/deliveries.ts";
import type { AppDeps } from "../../../../src/app/deps.ts";
import { endpointTools } from "../../../../src/app/endpoint-tools.ts";
import { endpointUseCases } from "../../../../src/app/endpoints.ts";
import { erasureUseCases } from "../../../../src/app/erasures.ts";
import { eventUseCases } from "../../../../src/app/events.ts";
import { settingsUseCases } from "../../../../src/app/settings.ts";
import { tokenUseCases } from "../../../../src/app/tokens.ts";
import { deliveredEvent } from "../../../support/engine-harness.ts";

export const ORIGIN = "http://herald.test";

/** The path and query of a URL the app handed out, to request it in-process. */
export const pathOf = (url: string): string => {
  const u = new URL(url);
  return u.pathname + u.search;
};

/** The whole HTTP app with the console, over memory, called in-process; its clock can be moved forward. */
export async function makeConsoleHarness(options: { frameAncestors?: string[]; livePollMs?: number } = {}) {
  const repos = createMemoryRepositories();
  const logLines: string[] = [];
  let offsetMs = 0;
  let last = 0;
  const clock = {
    now() {
      last = Math.max(Date.now() + offsetMs, last + 1);
      return new Date(last);
    },
  };
  const deps: AppDeps = {
    repos,
    clock,
    ids: systemIds,
    cipher: await createAesGcmCipher(crypto.getRandomValues(new Uint8Array(32))),
    subjects: await createSubjectKeys(crypto.getRandomValues(new Uint8Array(32))),
    certificates: createCertificateReader(),
    signal: { notify() {} },
    policy: { allowHttpUrls: true, allowPrivateNetworks: true },
  };
  const tokens = tokenUseCases({ tokens: repos.tokens, clock, ids: systemIds });
  const events = eventUseCases(deps, { eventsFiltered() {} });
  const endpoints = endpointUseCases(deps);
  const app: HttpApp = createHttpApp({
    endpoints,
    events,
    deliveries: deliveryUseCases(deps),
    tools: endpointTools(deps, events),
    tokens,
    erasures: erasureUseCases(deps),
    settings: settingsUseCases({ settings: repos.settings, clock, maxRetentionMs: 30 * 86_400_000 }),
    ping: () => repos.ping(),
    metrics: async () => "",
    logger: createJsonLogger("debug", (line) => logLines.push(line)),
    version: "0.0.0-test",
    console: {
      use: consoleUseCases({
        sessions: new MemoryConsoleSessions(),
        tokens,
        endpoints,
        clock,
        ids: systemIds,
      }),
      insights: consoleInsights({
        ...deps,
        insights: createMemoryInsights(() => repos.deliveries.rows.values()),
        version: "0.0.0-test",
      }),
      portalFrameAncestors: options.frameAncestors ?? [],
      livePollMs: options.livePollMs ?? 50,
    },
  });

  const request = (path: string, init: RequestInit = {}) =>
    app.request(new Request(`${ORIGIN}${path}`, init));

  /**
   * A browser: a cookie jar (the session cookie `cookieName`, and any other the console sets, such as a
   * flash), and same-origin form posts carrying the page's CSRF token.
   */
  const browser = (cookieName = "herald_console") => {
    const jar = new Map<string, string>();
    const cookies = () => [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
    const b = {
      /** The session cookie, as `name=value`; null when there is none. */
      get cookie() {
        const value = jar.get(cookieName);
        return value ? `${cookieName}=${value}` : null;
      },
      /** Every cookie the browser holds, by name. */
      get jar(): ReadonlyMap<string, string> {
        return jar;
      },
      remember(res: Response) {
        for (const line of res.headers.getSetCookie()) {
          const [pair] = line.split(";");
          const [name, value] = pair!.split("=");
          if (value && !/max-age=0/i.test(line)) jar.set(name!, value);
          else jar.delete(name!);
        }
        return res;
      },
      async get(path: string, headers: Record<string, string> = {}) {
        return b.remember(
          await request(path, { headers: { ...headers, ...(jar.size > 0 ? { Cookie: cookies() } : {}) } }),
        );
      },
      /** Follows a redirect (Post/Redirect/Get) as a browser does: a GET of its Location. */
      async follow(res: Response) {
        const location = res.headers.get("location");
        if (res.status !== 303 || !location) throw new Error(`not a 303 redirect: ${res.status}`);
        return b.get(location);
      },
      async post(
        path: string,
        form: Record<string, string | string[]>,
        headers: Record<string, string> = {},
      ) {
        const body = new URLSearchParams();
        for (const [k, v] of Object.entries(form)) for (const one of [v].flat()) body.append(k, one);
        return b.remember(
          await request(path, {
            method: "POST",
            body,
            headers: {
              "Content-Type": "application/x-www-form-urlencoded",
              Origin: ORIGIN,
              "Sec-Fetch-Site": "same-origin",
              ...headers,
              ...(jar.size > 0 ? { Cookie: cookies() } : {}),
            },
          }),
        );
      },
      /** The CSRF token of a page of the session. */
      async csrf(path = "/console"): Promise<string> {
        const text = await (await b.get(path)).text();
        const m = /name="_csrf" value="([^"]+)"/.exec(text);
        if (!m) throw new Error(`no CSRF token on ${path}:\n${text.slice(0, 500)}`);
        return m[1]!;
      },
    };
    return b;
  };

  return {
    app,
    repos,
    /** Opens what the store holds sealed (secrets, header values), to check what a form wrote. */
    cipher: deps.cipher,
    /** Every JSON log line the app wrote. */
    logLines,
    request,
    browser,
    advance(ms: number) {
      offsetMs += ms;
    },
    async newToken() {
      const { token, record } = await tokens.create({});
      return { token, scope: { tenantId: record.tenantId, projectId: record.projectId } };
    },
    /** A signed-in console browser for a new project, and its API token. */
    async signedIn() {
      const { token, scope } = await this.newToken();
      const b = browser();
      const res = await b.post("/console/sign-in", { token });
      if (res.status !== 303) throw new Error(`sign-in answered ${res.status}`);
      return { b, token, scope };
    },
    api(token: string, path: string, init: RequestInit = {}) {
      return request(`/api/v1${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", ...init.headers },
      });
    },
    /** Publishes a message.delivered event (`deliveredEvent`) as the token; the answer is the test's to check. */
    publish(token: string, more: Record<string, unknown> = {}) {
      return this.api(token, "/events", { method: "POST", body: JSON.stringify(deliveredEvent(more)) });
    },
  };
}
