import { describe, expect, it } from "vitest";
import {
  createHeraldClient,
  HeraldApiError,
  type ListPage,
  paginate,
  unwrap,
  type Webhook,
} from "../../../clients/typescript/client.ts";
import { makeApiHarness } from "../../support/api-harness.ts";

/** The HeraldApiError a call rejects with; fails the test when it resolves. */
async function failure(call: Promise<unknown>): Promise<HeraldApiError> {
  try {
    await call;
  } catch (e) {
    expect(e).toBeInstanceOf(HeraldApiError);
    return e as HeraldApiError;
  }
  throw new Error("expected the call to fail");
}

async function project() {
  const h = await makeApiHarness();
  const { token } = await h.newToken();
  return { h, api: h.client(token), token };
}

describe("paginate", () => {
  it("walks every page of a real list, following next_cursor, and stops at null", async () => {
    const { api } = await project();
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const w = await unwrap(
        api.POST("/api/v1/webhooks", {
          body: { url: `https://receiver.invalid/${i}`, events: ["message.sent"] },
        }),
      );
      created.push(w.id);
    }
    const cursors: (string | undefined)[] = [];
    const seen: string[] = [];
    for await (const w of paginate((cursor) => {
      cursors.push(cursor);
      return unwrap(api.GET("/api/v1/webhooks", { params: { query: { limit: 2, cursor } } }));
    })) {
      seen.push(w.id);
    }
    expect(seen).toEqual([...created].reverse());
    expect(cursors).toHaveLength(3);
    expect(cursors[0]).toBeUndefined();
    expect(cursors[1]).toEqual(expect.any(String));
    expect(cursors[2]).toEqual(expect.any(String));
    expect(cursors[1]).not.toBe(cursors[2]);
  });

  it("asks for no page after next_cursor null, and no further page when the caller stops early", async () => {
    const pages: Record<string, ListPage<number>> = {
      first: { data: [1, 2], next_cursor: "b" },
      b: { data: [3], next_cursor: "c" },
      c: { data: [4, 5], next_cursor: null },
    };
    const asked: (string | undefined)[] = [];
    const fetchPage = async (cursor: string | undefined) => {
      asked.push(cursor);
      return pages[cursor ?? "first"]!;
    };
    const all: number[] = [];
    for await (const n of paginate(fetchPage)) all.push(n);
    expect(all).toEqual([1, 2, 3, 4, 5]);
    expect(asked).toEqual([undefined, "b", "c"]);

    asked.length = 0;
    for await (const n of paginate(fetchPage)) if (n === 2) break;
    expect(asked).toEqual([undefined]);
  });

  it("yields nothing for an empty list and passes a failing page's error on", async () => {
    const { api } = await project();
    const none: Webhook[] = [];
    for await (const w of paginate((cursor) =>
      unwrap(api.GET("/api/v1/webhooks", { params: { query: { cursor } } })),
    )) {
      none.push(w);
    }
    expect(none).toEqual([]);
    const walk = async () => {
      for await (const _ of paginate((cursor) =>
        unwrap(api.GET("/api/v1/webhooks", { params: { query: { cursor: cursor ?? "!!!" } } })),
      )) {
        // never reached
      }
    };
    await expect(walk()).rejects.toMatchObject({ status: 422, code: "validation_failed" });
  });
});

describe("unwrap and HeraldApiError", () => {
  it("unwrap returns the data of a 2xx answer", async () => {
    const { api } = await project();
    const w = await unwrap(
      api.POST("/api/v1/webhooks", { body: { url: "https://receiver.invalid/x", events: ["message.sent"] } }),
    );
    expect(w.secret).toMatch(/^whsec_/);
    const test = await unwrap(api.POST("/api/v1/webhooks/{id}/test", { params: { path: { id: w.id } } }));
    expect(test.delivery).toMatchObject({ webhook_id: w.id, event_id: test.event.id, status: "pending" });
    const recovery = await unwrap(
      api.POST("/api/v1/webhooks/{id}/recover", {
        params: { path: { id: w.id } },
        body: { since: new Date(Date.now() - 3_600_000).toISOString() },
      }),
    );
    expect(recovery.queued).toBe(0);
  });

  it("a 404 throws a HeraldApiError with the problem's fields", async () => {
    const { h, token } = await project();
    const api = createHeraldClient({ baseUrl: `${h.baseUrl}/`, token, fetch: h.fetch });
    const id = crypto.randomUUID();
    const e = await failure(
      unwrap(
        api.GET("/api/v1/webhooks/{id}", {
          params: { path: { id } },
          headers: { "X-Request-Id": "req-404" },
        }),
      ),
    );
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe("HeraldApiError");
    expect(e.message).toBe("404 not_found: The endpoint was not found.");
    expect({
      status: e.status,
      code: e.code,
      type: e.type,
      title: e.title,
      detail: e.detail,
      errors: e.errors,
      requestId: e.requestId,
    }).toEqual({
      status: 404,
      code: "not_found",
      type: "https://herald.dev/problems/not_found",
      title: "Not Found",
      detail: "The endpoint was not found.",
      errors: [],
      requestId: "req-404",
    });
    expect(e.body).toMatchObject({ status: 404, code: "not_found", request_id: "req-404" });
  });

  it("a 422 carries every invalid field in errors[]", async () => {
    const { api } = await project();
    const err = await failure(
      unwrap(
        api.POST("/api/v1/webhooks", {
          body: {
            url: "https://receiver.invalid/x",
            events: ["message.sent", "message.lost" as "message.sent"],
          },
        }),
      ),
    );
    expect(err).toMatchObject({ status: 422, code: "validation_failed", title: "Validation Failed" });
    expect(err.errors).toEqual([
      { path: "body.events.1", message: 'events.1 is not an event type of the catalog: "message.lost"' },
    ]);

    const window = await failure(
      unwrap(
        api.POST("/api/v1/webhooks/{id}/recover", {
          params: { path: { id: crypto.randomUUID() } },
          body: { since: "2026-01-01T00:00:00Z", until: "2025-01-01T00:00:00Z" },
        }),
      ),
    );
    expect(window.errors.map((i) => i.path)).toEqual(["body.until"]);
  });

  it("a 401 and an answer that is not a problem document still become HeraldApiError", async () => {
    const { h } = await project();
    const anonymous = await failure(unwrap(h.client().GET("/api/v1/webhooks")));
    expect(anonymous).toMatchObject({ status: 401, code: "unauthorized" });

    const proxy = createHeraldClient({
      baseUrl: "http://herald.test",
      fetch: async () =>
        new Response("Bad Gateway", { status: 502, headers: { "Content-Type": "text/plain" } }),
    });
    const e = await failure(unwrap(proxy.GET("/api/v1/webhooks")));
    expect(e).toMatchObject({
      status: 502,
      code: "unknown",
      detail: "HTTP 502",
      errors: [],
      requestId: null,
    });
  });

  it("sends the token as a bearer header to baseUrl without a trailing slash", async () => {
    const seen: Request[] = [];
    const api = createHeraldClient({
      baseUrl: "http://herald.test///",
      token: "hrld_abc",
      fetch: async (request) => {
        seen.push(request);
        return Response.json({ data: [], next_cursor: null });
      },
    });
    expect(await unwrap(api.GET("/api/v1/webhooks", { params: { query: { limit: 5 } } }))).toEqual({
      data: [],
      next_cursor: null,
    });
    expect(seen[0]!.url).toBe("http://herald.test/api/v1/webhooks?limit=5");
    expect(seen[0]!.headers.get("authorization")).toBe("Bearer hrld_abc");
  });
});
