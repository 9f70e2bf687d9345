import { describe, expect, it } from "vitest";
import type { PublishEvent } from "../../../clients/typescript/client.ts";
import { rateLimitPolicyField, tokenBuckets } from "../../../src/adapters/http/rate-limit.ts";
import type { Clock } from "../../../src/app/ports/system.ts";
import { makeApiHarness } from "../../support/api-harness.ts";

/** A clock that moves only when told to. */
function manualClock(start = Date.parse("2026-11-22T10:00:00Z")) {
  let now = start;
  const clock: Clock = { now: () => new Date(now) };
  return {
    clock,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe("token buckets", () => {
  it("allow a burst, then refuse until time refills the bucket", () => {
    const t = manualClock();
    const buckets = tokenBuckets({ perSecond: 2, burst: 4 }, t.clock);
    const takes = Array.from({ length: 5 }, () => buckets.take("a"));
    expect(takes.map((x) => x.allowed)).toEqual([true, true, true, true, false]);
    expect(takes.map((x) => x.remaining)).toEqual([3, 2, 1, 0, 0]);
    expect(takes[4]).toMatchObject({ retryAfterSeconds: 1, resetSeconds: 2 });
    expect(buckets.take("b").allowed).toBe(true); // another key has its own bucket
    t.advance(499);
    expect(buckets.take("a").allowed).toBe(false);
    t.advance(1); // 500 ms at 2/s: one request
    expect(buckets.take("a")).toMatchObject({ allowed: true, remaining: 0 });
    expect(buckets.take("a").allowed).toBe(false);
    t.advance(60_000); // never more than the burst
    expect(Array.from({ length: 5 }, () => buckets.take("a").allowed)).toEqual([
      true,
      true,
      true,
      true,
      false,
    ]);
  });

  it("ask for a longer wait when the rate is below one per second", () => {
    const t = manualClock();
    const buckets = tokenBuckets({ perSecond: 1 / 60, burst: 1 }, t.clock);
    expect(buckets.take("a").allowed).toBe(true);
    expect(buckets.take("a")).toMatchObject({ allowed: false, retryAfterSeconds: 60, resetSeconds: 60 });
    t.advance(30_000);
    expect(buckets.take("a")).toMatchObject({ allowed: false, retryAfterSeconds: 30 });
  });

  it("hold a bounded number of keys, dropping full buckets before partly used ones", () => {
    const t = manualClock();
    const buckets = tokenBuckets({ perSecond: 1, burst: 2 }, t.clock, 100);
    buckets.take("busy");
    buckets.take("busy"); // empty, and the least recently used key from here on
    for (let i = 0; i < 99; i++) buckets.take(`k${i}`);
    t.advance(1_000); // the k buckets are full again; "busy" holds 1 of 2
    for (let i = 99; i < 150; i++) buckets.take(`k${i}`);
    expect(buckets.size()).toBeLessThanOrEqual(100);
    // Dropping "busy" would have handed it a full bucket (remaining 1).
    expect(buckets.take("busy")).toMatchObject({ allowed: true, remaining: 0 });
    for (let i = 0; i < 5_000; i++) buckets.take(`flood${i}`);
    expect(buckets.size()).toBeLessThanOrEqual(100);
  });

  it("describe the policy in the RateLimit-Policy syntax", () => {
    expect(rateLimitPolicyField({ perSecond: 100, burst: 100 })).toBe('"per-token";q=100;w=1');
    expect(rateLimitPolicyField({ perSecond: 100, burst: 250 })).toBe('"per-token";q=250;w=3');
    expect(rateLimitPolicyField({ perSecond: 1 / 60, burst: 10 })).toBe('"per-token";q=10;w=600');
  });
});

describe("API rate limiting per token", () => {
  it("answers a flood from one token with 429 and the headers, while another token is unaffected", async () => {
    const t = manualClock();
    let published = 0;
    const h = await makeApiHarness({
      rateLimit: { limit: { perSecond: 5, burst: 5 }, clock: t.clock },
      override: (deps) => ({
        events: {
          ...deps.events,
          publish: (...args: Parameters<typeof deps.events.publish>) => {
            published++;
            return deps.events.publish(...args);
          },
        },
      }),
    });
    const a = h.client((await h.newToken()).token);
    const b = h.client((await h.newToken()).token);

    for (let i = 0; i < 5; i++) {
      const ok = await a.GET("/api/v1/webhooks");
      expect(ok.response.status).toBe(200);
      expect(ok.response.headers.get("ratelimit-policy")).toBe('"per-token";q=5;w=1');
      expect(ok.response.headers.get("ratelimit")).toBe(`"per-token";r=${4 - i};t=1`);
    }
    const publishBody: PublishEvent = {
      type: "message.sent",
      data: {
        message_id: crypto.randomUUID(),
        status: "sent",
        channel: "sms",
        message_type: "marketing",
        recipient: "+15550100",
      },
    };
    {
      const res = await a.GET("/api/v1/webhooks");
      expect(res.response.status).toBe(429);
      expect(res.response.headers.get("content-type")).toBe("application/problem+json");
      expect(res.response.headers.get("retry-after")).toBe("1");
      expect(res.response.headers.get("ratelimit")).toBe('"per-token";r=0;t=1');
      expect(res.response.headers.get("ratelimit-policy")).toBe('"per-token";q=5;w=1');
      expect(res.error).toMatchObject({
        type: "https://herald.dev/problems/rate_limited",
        status: 429,
        code: "rate_limited",
        title: "Too Many Requests",
      });
    }
    const testEvent = await a.POST("/api/v1/webhooks/{id}/test", {
      params: { path: { id: crypto.randomUUID() } },
      body: {},
    });
    expect(testEvent.response.status).toBe(429); // a test event is a person's call, not publishing
    expect(published).toBe(0); // a refused request never reaches the use case

    // The other token has a bucket of its own.
    expect((await b.GET("/api/v1/webhooks")).response.status).toBe(200);
    // Health, readiness, metrics and the documents are outside the limit, even with the flooding token.
    for (const path of ["/healthz", "/readyz", "/metrics", "/openapi.json", "/docs"]) {
      const res = await h.fetch(
        new Request(`${h.baseUrl}${path}`, {
          headers: { Authorization: `Bearer ${(await h.newToken()).token}` },
        }),
      );
      expect(res.status, path).toBe(200);
      expect(res.headers.get("ratelimit"), path).toBeNull();
    }

    // Publishing has its own budget (not limited in this harness): the management one does not stop it.
    const publishing = await a.POST("/api/v1/events", { body: publishBody });
    expect(publishing.response.status).toBe(202);
    expect(publishing.response.headers.get("ratelimit")).toBeNull();
    expect(published).toBe(1);

    // Refill: after 400 ms at 5/s, two requests; the third waits.
    t.advance(400);
    expect((await a.GET("/api/v1/webhooks")).response.status).toBe(200);
    expect(
      (await a.GET("/api/v1/events/{id}", { params: { path: { id: publishing.data!.id } } })).response.status,
    ).toBe(200);
    expect((await a.GET("/api/v1/webhooks")).response.status).toBe(429);
    t.advance(1_000);
    expect((await a.GET("/api/v1/webhooks")).response.headers.get("ratelimit")).toBe('"per-token";r=4;t=1');
  });

  it("gives publishing (POST /events and /events/batch) a budget of its own, per token, beside the management one", async () => {
    const t = manualClock();
    const h = await makeApiHarness({
      rateLimit: { limit: { perSecond: 1, burst: 2 }, clock: t.clock },
      override: () => ({ publishRateLimit: { limit: { perSecond: 10, burst: 3 }, clock: t.clock } }),
    });
    const a = h.client((await h.newToken()).token);
    const b = h.client((await h.newToken()).token);
    const publish = (api: typeof a) =>
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
      });
    const batch = (api: typeof a) =>
      api.POST("/api/v1/events/batch", {
        body: {
          events: [
            {
              type: "message.sent",
              data: {
                message_id: crypto.randomUUID(),
                status: "sent",
                channel: "sms",
                message_type: "marketing",
                recipient: "+15550100",
              },
            },
          ],
        },
      });

    // Management calls use up their two; publishing still has its three.
    expect((await a.GET("/api/v1/webhooks")).response.status).toBe(200);
    expect((await a.GET("/api/v1/webhooks")).response.status).toBe(200);
    expect((await a.GET("/api/v1/webhooks")).response.status).toBe(429);
    const first = await publish(a);
    expect(first.response.status).toBe(202);
    expect(first.response.headers.get("ratelimit-policy")).toBe('"publish";q=3;w=1');
    expect(first.response.headers.get("ratelimit")).toBe('"publish";r=2;t=1');
    const second = await batch(a);
    expect(second.response.status).toBe(200);
    expect(second.response.headers.get("ratelimit")).toBe('"publish";r=1;t=1');
    expect((await publish(a)).response.status).toBe(202);
    const refused = await publish(a);
    expect(refused.response.status).toBe(429);
    expect(refused.response.headers.get("retry-after")).toBe("1");
    expect(refused.response.headers.get("ratelimit-policy")).toBe('"publish";q=3;w=1');
    expect(refused.error).toMatchObject({ code: "rate_limited" });
    expect((refused.error as { detail: string }).detail).toContain("3 publishing requests in a burst");
    expect((await batch(a)).response.status).toBe(429);

    // Reading an event is management; another token has both budgets whole.
    expect(
      (await a.GET("/api/v1/events/{id}", { params: { path: { id: first.data!.id } } })).response.status,
    ).toBe(429);
    expect((await publish(b)).response.status).toBe(202);
    expect((await b.GET("/api/v1/webhooks")).response.headers.get("ratelimit")).toBe('"per-token";r=1;t=1');

    // 100 ms at 10/s refills one publish; management is still empty.
    t.advance(100);
    expect((await publish(a)).response.status).toBe(202);
    expect((await a.GET("/api/v1/webhooks")).response.status).toBe(429);
  });

  it("leaves unauthenticated requests to the 401 and limits nothing when off", async () => {
    const t = manualClock();
    const limited = await makeApiHarness({
      rateLimit: { limit: { perSecond: 1, burst: 1 }, clock: t.clock },
    });
    for (let i = 0; i < 3; i++) {
      const res = await limited.client(`hrld_${"x".repeat(43)}`).GET("/api/v1/webhooks");
      expect(res.response.status).toBe(401);
    }
    const open = await makeApiHarness();
    const api = open.client((await open.newToken()).token);
    for (let i = 0; i < 150; i++) {
      const res = await api.GET("/api/v1/webhooks");
      expect(res.response.status).toBe(200);
      expect(res.response.headers.get("ratelimit")).toBeNull();
    }
  });
});
