import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type PublishEvent, unwrap } from "../../../../clients/typescript/client.ts";
import { createMemoryRepositories } from "../../../../src/adapters/memory/repositories.ts";
import { naturalBatch, PUBLISH_BATCHING } from "../../../../src/adapters/natural-batch.ts";
import type { StoredEvent } from "../../../../src/app/ports/events.ts";
import { type Repositories, StoreUnavailableError } from "../../../../src/app/ports/store.ts";
import type { Delivery } from "../../../../src/domain/delivery.ts";
import { makeApiHarness } from "../../../support/api-harness.ts";
import { apiSuite } from "./api-suite.ts";

describe("API over the app in-process", () => {
  apiSuite(async () => {
    const h = await makeApiHarness();
    return {
      baseUrl: h.baseUrl,
      fetch: h.fetch,
      newToken: (scope) => h.newToken(scope),
      revokeToken: (token) => h.revokeToken(token),
      deliversInBackground: false,
    };
  });
});

const DRIVER_TEXT = "connect ECONNREFUSED 10.0.0.7:27017 (MongoServerSelectionError: topology closed)";

/** Repositories whose every method fails the way a driver does when the database is unreachable. */
function downRepos(makeError: () => Error): Repositories {
  const fail = () => Promise.reject(makeError());
  const failing = <T extends object>(): T =>
    new Proxy({} as T, {
      get: () => fail,
    });
  return {
    endpoints: failing(),
    events: failing(),
    deliveries: failing(),
    shards: failing(),
    tokens: failing(),
    idempotency: failing(),
    erasures: failing(),
    settings: failing(),
    ping: fail,
    close: async () => {},
  };
}

const driverError = (name: string) => () => Object.assign(new Error(DRIVER_TEXT), { name });

function expectNoLeak(text: string) {
  for (const secret of ["ECONNREFUSED", "10.0.0.7", "Mongo", "topology", "stack", "at "]) {
    expect(text).not.toContain(secret);
  }
}

describe("API failure paths (in-process only)", () => {
  it("answers 503 unavailable with Retry-After when the database is down, without driver text", async () => {
    const live = createMemoryRepositories();
    const h = await makeApiHarness({
      repos: downRepos(() => new StoreUnavailableError(DRIVER_TEXT)),
      tokenRepos: live,
    });
    const { token } = await h.newToken();
    const api = h.client(token);
    const calls = [
      api.GET("/api/v1/webhooks"),
      api.POST("/api/v1/webhooks", { body: { url: "https://receiver.invalid/", events: ["message.sent"] } }),
      api.GET("/api/v1/webhooks/{id}", { params: { path: { id: crypto.randomUUID() } } }),
      api.POST("/api/v1/events", {
        body: {
          type: "message.sent",
          data: {
            message_id: crypto.randomUUID(),
            status: "sent",
            channel: "sms",
            message_type: "marketing",
            recipient: "+15550100",
          },
        },
      }),
    ];
    for (const res of await Promise.all(calls)) {
      expect(res.response.status).toBe(503);
      expect(res.response.headers.get("retry-after")).toBe("5");
      expect(res.response.headers.get("content-type")).toBe("application/problem+json");
      expect(res.error).toMatchObject({
        status: 503,
        code: "unavailable",
        type: "https://herald.dev/problems/unavailable",
        title: "Service Unavailable",
      });
      expectNoLeak(JSON.stringify(res.error));
    }
  });

  it("answers 503 for an unwrapped driver error, also while authenticating", async () => {
    for (const name of ["MongoServerSelectionError", "MongoNetworkError"]) {
      const h = await makeApiHarness({ repos: downRepos(driverError(name)) });
      const res = await h.client(`hrld_${"b".repeat(43)}`).GET("/api/v1/webhooks");
      expect(res.response.status).toBe(503);
      expect(res.response.headers.get("retry-after")).toBe("5");
      expect(res.error).toMatchObject({ code: "unavailable" });
      expectNoLeak(JSON.stringify(res.error));
    }
  });

  it("answers 500 internal with a generic detail and the request id, and logs the error", async () => {
    const h = await makeApiHarness({
      override: (deps) => ({
        endpoints: {
          ...deps.endpoints,
          get: async () => {
            throw new Error("secret internal detail");
          },
        },
      }),
    });
    const { token } = await h.newToken();
    const res = await h.fetch(
      new Request(`${h.baseUrl}/api/v1/webhooks/${crypto.randomUUID()}`, {
        headers: { Authorization: `Bearer ${token}`, "X-Request-Id": "req-500" },
      }),
    );
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    const text = await res.text();
    expect(text).not.toContain("secret internal detail");
    expect(text).not.toMatch(/Error:|\n\s+at /);
    expect(JSON.parse(text)).toEqual({
      type: "https://herald.dev/problems/internal",
      title: "Internal Server Error",
      status: 500,
      detail: "An unexpected error occurred. Quote request id req-500 when reporting it.",
      code: "internal",
      request_id: "req-500",
    });
    const logged = h.logLines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const error = logged.find((l) => l.msg === "unhandled error");
    expect(error).toMatchObject({ level: "error", request_id: "req-500" });
    expect(JSON.stringify(error)).toContain("secret internal detail");
  });

  it("GET /readyz answers 503 when the database does not answer; /healthz stays 200", async () => {
    const h = await makeApiHarness({
      override: () => ({
        ping: async () => {
          throw new StoreUnavailableError(DRIVER_TEXT);
        },
      }),
    });
    const ready = await h.fetch(new Request(`${h.baseUrl}/readyz`));
    expect(ready.status).toBe(503);
    expect(ready.headers.get("retry-after")).toBe("5");
    expect(ready.headers.get("content-type")).toBe("application/problem+json");
    const text = await ready.text();
    expectNoLeak(text);
    expect(JSON.parse(text)).toMatchObject({ code: "unavailable", status: 503 });
    expect((await h.fetch(new Request(`${h.baseUrl}/healthz`))).status).toBe(200);
  });

  it("GET /metrics serves deps.metrics() as it is", async () => {
    const h = await makeApiHarness({ override: () => ({ metrics: async () => "herald_test_total 3\n" }) });
    const res = await h.fetch(new Request(`${h.baseUrl}/metrics`));
    expect(await res.text()).toBe("herald_test_total 3\n");
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  });

  it("wakes the dispatcher on publish and retry, but not on an idempotent replay", async () => {
    const h = await makeApiHarness();
    const { token } = await h.newToken();
    const api = h.client(token);
    const w = await unwrap(
      api.POST("/api/v1/webhooks", { body: { url: "https://receiver.invalid/a", events: ["message.sent"] } }),
    );
    const body: PublishEvent = {
      type: "message.sent",
      data: {
        message_id: crypto.randomUUID(),
        status: "sent",
        channel: "push",
        message_type: "transactional",
        recipient: "device-1",
      },
    };
    const header = { "idempotency-key": "once" };
    await unwrap(api.POST("/api/v1/events", { body, params: { header } }));
    expect(h.signal.count).toBe(1);
    await unwrap(api.POST("/api/v1/events", { body, params: { header } }));
    expect(h.signal.count).toBe(1);
    const [first] = (
      await unwrap(api.GET("/api/v1/webhooks/{id}/deliveries", { params: { path: { id: w.id } } }))
    ).data;
    await unwrap(
      api.POST("/api/v1/webhooks/deliveries/{delivery_id}/retry", {
        params: { path: { delivery_id: first!.id } },
      }),
    );
    expect(h.signal.count).toBe(2);
  });

  it("writes one access log line per request, without the token or the body", async () => {
    const h = await makeApiHarness();
    const { token } = await h.newToken();
    const api = h.client(token);
    const description = "body-marker-4711";
    await api.POST("/api/v1/webhooks", {
      body: { url: "https://receiver.invalid/log", events: ["message.sent"], description },
      headers: { "X-Request-Id": "req-log" },
    });
    const lines = h.logLines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const access = lines.filter((l) => l.msg === "request");
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({
      level: "info",
      method: "POST",
      path: "/api/v1/webhooks",
      status: 201,
      request_id: "req-log",
    });
    expect(typeof access[0]!.duration_ms).toBe("number");
    const all = h.logLines.join("\n");
    expect(all).not.toContain(token);
    expect(all).not.toContain(token.slice(5, 20));
    expect(all).not.toContain(description);
    expect(all).not.toContain("whsec_");
  });

  it("keeps custom header values sealed at rest and out of every log line, answer and error", async () => {
    const h = await makeApiHarness();
    const { token } = await h.newToken();
    const api = h.client(token);
    const value = "hv-secret-0f3b9d2a";
    const w = await unwrap(
      api.POST("/api/v1/webhooks", {
        body: {
          url: "https://receiver.invalid/h",
          events: ["message.sent"],
          headers: { "X-Api-Key": value },
        },
      }),
    );
    const stored = await h.repos.endpoints.getMany([w.id]);
    expect(stored[0]!.headers).toHaveLength(1);
    expect(stored[0]!.headers[0]!.name).toBe("X-Api-Key");
    expect(stored[0]!.headers[0]!.sealed).toMatch(/^v1\./);
    expect(JSON.stringify(stored)).not.toContain(value);
    const path = { id: w.id };
    const answers = await Promise.all([
      api.GET("/api/v1/webhooks/{id}", { params: { path } }),
      api.GET("/api/v1/webhooks"),
      api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body: { headers: { "X-Other": `${value}2` } } }),
      // Refused: a value with a line break, and one for a reserved name.
      api.PATCH("/api/v1/webhooks/{id}", {
        params: { path },
        body: { headers: { "X-Bad": `${value}\n`, Host: value } },
      }),
      api.POST("/api/v1/webhooks", {
        body: { url: "ftp://x", events: ["message.sent"], headers: { "X-Api-Key": value } },
      }),
    ]);
    expect(answers.map((a) => a.response.status)).toEqual([200, 200, 200, 422, 422]);
    for (const a of answers) expect(JSON.stringify(a.data ?? a.error)).not.toContain(value);
    expect(h.logLines.length).toBeGreaterThan(5);
    expect(h.logLines.join("\n")).not.toContain(value);
  });

  it("never lets an unauthenticated request reach a use case", async () => {
    let called = 0;
    const h = await makeApiHarness({
      override: (deps) => ({
        endpoints: {
          ...deps.endpoints,
          create: async (...args: Parameters<typeof deps.endpoints.create>) => {
            called++;
            return deps.endpoints.create(...args);
          },
        },
      }),
    });
    const res = await h
      .client()
      .POST("/api/v1/webhooks", { body: { url: "https://receiver.invalid/", events: ["message.sent"] } });
    expect(res.response.status).toBe(401);
    expect(called).toBe(0);
  });

  it("serves at /openapi.json the committed document (only info.version is the running one)", async () => {
    const h = await makeApiHarness();
    const served = (await (await h.fetch(new Request(`${h.baseUrl}/openapi.json`))).json()) as {
      info: { version: string };
    };
    expect(served.info.version).toBe("0.0.0-test");
    const committed = JSON.parse(
      readFileSync(new URL("../../../../openapi/openapi.json", import.meta.url), "utf8"),
    ) as {
      info: { version: string };
    };
    expect({ ...served, info: { ...served.info, version: committed.info.version } }).toEqual(committed);
  });
});

describe("batch publish: writes per batch (in-process, memory store)", () => {
  const message = (): PublishEvent => ({
    type: "message.sent",
    data: {
      message_id: crypto.randomUUID(),
      status: "sent",
      channel: "sms",
      message_type: "marketing",
      recipient: "+15550100",
    },
  });

  /** Memory repositories that count the publish path's calls. */
  function countingRepos() {
    const repos = createMemoryRepositories();
    const calls = { eventInserts: 0, deliveryInserts: [] as number[], reserves: 0, subscribedReads: 0 };
    const insert = repos.events.insert.bind(repos.events);
    repos.events.insert = (e) => {
      calls.eventInserts++;
      return insert(e);
    };
    const insertMany = repos.deliveries.insertMany.bind(repos.deliveries);
    repos.deliveries.insertMany = (ds) => {
      calls.deliveryInserts.push(ds.length);
      return insertMany(ds);
    };
    const reserve = repos.idempotency.reserve.bind(repos.idempotency);
    repos.idempotency.reserve = (...args) => {
      calls.reserves++;
      return reserve(...args);
    };
    const listSubscribed = repos.endpoints.listSubscribed.bind(repos.endpoints);
    repos.endpoints.listSubscribed = (...args) => {
      calls.subscribedReads++;
      return listSubscribed(...args);
    };
    return { repos, calls, insert };
  }

  async function eightEndpoints(h: Awaited<ReturnType<typeof makeApiHarness>>) {
    const api = h.client((await h.newToken()).token);
    for (let i = 0; i < 8; i++) {
      await unwrap(
        api.POST("/api/v1/webhooks", {
          body: { url: `https://receiver.invalid/${i}`, events: ["message.sent"] },
        }),
      );
    }
    return api;
  }

  it("100 events to 8 endpoints: all 800 first deliveries in one write, the 100 events handed over together", async () => {
    const { repos, calls } = countingRepos();
    const h = await makeApiHarness({ repos });
    const api = await eightEndpoints(h);
    const events = Array.from({ length: 100 }, (_, i) => ({
      ...message(),
      ...(i % 2 === 0 ? { idempotency_key: `k-${i}` } : {}),
    }));
    const res = await unwrap(api.POST("/api/v1/events/batch", { body: { events } }));
    expect(res.data.map((r) => r.status)).toEqual(events.map(() => 202));
    expect(calls.deliveryInserts).toEqual([800]); // one write for every delivery of the batch
    expect(calls.eventInserts).toBe(100); // the memory store's port inserts one event per call (no round trip)
    expect(calls.reserves).toBe(50); // one per keyed event
    expect(calls.subscribedReads).toBe(1); // one read of the subscribers per event type in the batch
    expect(h.signal.count).toBe(100);
    expect(repos.deliveries.rows.size).toBe(800);
    expect(repos.events.rows.size).toBe(100);
    // One event at a time (POST /events) takes a write of deliveries per event.
    calls.deliveryInserts = [];
    for (let i = 0; i < 10; i++) await unwrap(api.POST("/api/v1/events", { body: message() }));
    expect(calls.deliveryInserts).toEqual(Array.from({ length: 10 }, () => 8));
  });

  it("a store with transactions gets every insert in one turn, which its natural batching sends as 3 statements", async () => {
    const { repos, insert } = countingRepos();
    const statements: number[] = [];
    // What the PostgreSQL store does (src/adapters/postgres/events.ts): concurrent inserts, batched.
    const batched = naturalBatch<{ event: StoredEvent; deliveries: readonly Delivery[] }, boolean>(
      async (calls) => {
        statements.push(calls.length);
        return Promise.all(
          calls.map(async (c) => {
            await repos.deliveries.insertMany(c.deliveries);
            return { ok: await insert(c.event) };
          }),
        );
      },
      PUBLISH_BATCHING,
    );
    repos.events.insertWithDeliveries = (event, deliveries) => batched({ event, deliveries });
    const h = await makeApiHarness({ repos });
    const api = await eightEndpoints(h);
    const events = Array.from({ length: 100 }, () => message());
    const res = await unwrap(api.POST("/api/v1/events/batch", { body: { events } }));
    expect(res.data.every((r) => r.status === 202)).toBe(true);
    // Two batches may be on their way at once: the first two inserts go alone, the other 98 together.
    expect(statements).toEqual([1, 1, 98]);
    expect(repos.deliveries.rows.size).toBe(800);
    expect(repos.events.rows.size).toBe(100);
  });

  it("a store failure fails the events it hit, as 503 problems, and the answer is still one result per event", async () => {
    const { repos } = countingRepos();
    const insert = repos.events.insert.bind(repos.events);
    let n = 0;
    repos.events.insert = (e) =>
      ++n % 2 === 0 ? Promise.reject(new StoreUnavailableError(DRIVER_TEXT)) : insert(e);
    const h = await makeApiHarness({ repos });
    const api = await eightEndpoints(h);
    const res = await unwrap(
      api.POST("/api/v1/events/batch", { body: { events: Array.from({ length: 4 }, () => message()) } }),
    );
    expect(res.data.map((r) => r.status)).toEqual([202, 503, 202, 503]);
    for (const r of res.data.filter((x) => x.status === 503)) {
      expect(r).toMatchObject({ problem: { code: "unavailable", status: 503 } });
      expectNoLeak(JSON.stringify(r));
    }
    expect(repos.events.rows.size).toBe(2);
  });
});
