import { describe, expect, it } from "vitest";
import {
  DELIVERED,
  expectInvalid,
  expectProblem,
  messageData,
  receiverUrl,
  SENT,
  type Suite,
} from "./context.ts";

/** The API suite's errors cases. */
export function errorCases(s: Suite): void {
  const { newProject, send, createWebhook } = s;
  describe("errors", () => {
    it("a body that is not JSON answers 400 invalid_json", async () => {
      const { token, api } = await newProject();
      const w = await createWebhook(api);
      const headers = { "Content-Type": "application/json" };
      for (const [method, path] of [
        ["POST", "/api/v1/webhooks"],
        ["PATCH", `/api/v1/webhooks/${w.id}`],
        ["POST", `/api/v1/webhooks/${w.id}/rotate`],
        ["POST", "/api/v1/events"],
      ] as const) {
        const res = await send(method, path, { token, headers, body: '{"url": "https://x.example",' });
        expectProblem(res, 400, "invalid_json");
      }
    });

    it("a body that is not application/json answers 415", async () => {
      const { token } = await newProject();
      const json = JSON.stringify({ url: receiverUrl(), events: [DELIVERED] });
      for (const headers of [
        { "Content-Type": "text/plain" },
        { "Content-Type": "application/x-www-form-urlencoded" },
      ]) {
        expectProblem(
          await send("POST", "/api/v1/webhooks", { token, headers, body: json }),
          415,
          "unsupported_media_type",
        );
      }
      const blob = new Request(new URL("/api/v1/events", s.target().baseUrl), {
        method: "POST",
        headers: { Authorization: `Bearer ${token}` },
        body: new Blob([json]),
      });
      const res = await (s.target().fetch ?? fetch)(blob);
      expectProblem({ response: res, error: await res.json() }, 415, "unsupported_media_type");
      expect(
        (
          await send("POST", "/api/v1/webhooks", {
            token,
            headers: { "Content-Type": "application/vnd.api+json" },
            body: json,
          })
        ).response.status,
      ).toBe(201);
    });

    it("a body over 256 KiB answers 413", async () => {
      const { token } = await newProject();
      const json = { url: receiverUrl(), events: [DELIVERED], description: "x".repeat(300 * 1024) };
      expectProblem(await send("POST", "/api/v1/webhooks", { token, json }), 413, "payload_too_large");
      expectProblem(
        await send("POST", "/api/v1/events", {
          token,
          json: { type: DELIVERED, data: { ...messageData(), reason: "y".repeat(300 * 1024) } },
        }),
        413,
        "payload_too_large",
      );
      const after = await send("POST", "/api/v1/webhooks", {
        token,
        json: { url: receiverUrl(), events: [SENT] },
      });
      expect(after.response.status).toBe(201);
    });

    it("POST /webhooks schema violations answer 422 with every path", async () => {
      const { token } = await newProject();
      const post = (json: unknown) => send("POST", "/api/v1/webhooks", { token, json });
      expectInvalid(await post({}), ["body.url", "body.events"]);
      expectInvalid(await post([]), ["body"]);
      expectInvalid(await post({ url: 42, events: "message.sent" }), ["body.url", "body.events"]);
      const unknown = expectInvalid(await post({ url: receiverUrl(), events: [DELIVERED, "message.lost"] }), [
        "body.events.1",
      ]);
      expect(unknown[0]!.message).toContain('"message.lost"');
      const dup = expectInvalid(await post({ url: receiverUrl(), events: [SENT, DELIVERED, SENT] }), [
        "body.events.2",
      ]);
      expect(dup[0]!.message).toContain("duplicate");
      expectInvalid(await post({ url: receiverUrl(), events: [] }), ["body.events"]);
      const http = expectInvalid(await post({ url: "http://receiver.example/hook", events: [SENT] }), [
        "body.url",
      ]);
      expect(http[0]!.message).toContain("https://");
      expectInvalid(await post({ url: "https://user:pass@receiver.example/hook", events: [SENT] }), [
        "body.url",
      ]);
      expectInvalid(await post({ url: `https://receiver.example/${"a".repeat(2048)}`, events: [SENT] }), [
        "body.url",
      ]);
      expectInvalid(await post({ url: "not a url", events: [SENT] }), ["body.url"]);
      // Found by schemathesis: a host over DNS's 253 characters failed inside TLS and then crashed Node.
      const longHost = `https://${Array(5).fill("a".repeat(63)).join(".")}/hook`;
      expectInvalid(await post({ url: longHost, events: [SENT] }), ["body.url"]);
      expectInvalid(await post({ url: receiverUrl(), events: [SENT], description: 7 }), ["body.description"]);
    });

    it("PATCH /webhooks/{id} needs at least one valid field", async () => {
      const { token, api } = await newProject();
      const w = await createWebhook(api);
      const patch = (json: unknown) => send("PATCH", `/api/v1/webhooks/${w.id}`, { token, json });
      expectInvalid(await patch({}), ["body"]);
      expectInvalid(await patch({ enabled: "no" }), ["body.enabled"]);
      expectInvalid(await patch({ events: [] }), ["body.events"]);
      expectInvalid(await patch({ url: "http://receiver.example/" }), ["body.url"]);
      const missing = await send("PATCH", `/api/v1/webhooks/${w.id}`, { token });
      expectInvalid(missing, ["body"]);
    });

    it("malformed and unknown ids answer 404 not_found", async () => {
      const { api } = await newProject();
      for (const id of ["nope", "123", `${crypto.randomUUID()}x`, crypto.randomUUID()]) {
        const p = { path: { id } };
        const d = { path: { delivery_id: id } };
        const calls = [
          api.GET("/api/v1/webhooks/{id}", { params: p }),
          api.PATCH("/api/v1/webhooks/{id}", { params: p, body: { enabled: true } }),
          api.POST("/api/v1/webhooks/{id}/rotate", { params: p }),
          api.POST("/api/v1/webhooks/{id}/enable", { params: p }),
          api.DELETE("/api/v1/webhooks/{id}", { params: p }),
          api.GET("/api/v1/webhooks/{id}/deliveries", { params: p }),
          api.GET("/api/v1/webhooks/deliveries/{delivery_id}", { params: d }),
          api.POST("/api/v1/webhooks/deliveries/{delivery_id}/retry", { params: d }),
        ];
        for (const res of await Promise.all(calls)) expectProblem(res, 404, "not_found");
      }
      for (const id of ["nope", "evt_XYZ", "evt_0123", `evt_${"0".repeat(32)}`]) {
        expectProblem(await api.GET("/api/v1/events/{id}", { params: { path: { id } } }), 404, "not_found");
      }
    });

    it("bad list parameters answer 422 naming the parameter", async () => {
      const { api, token } = await newProject();
      const w = await createWebhook(api);
      for (const limit of ["0", "101", "abc", "2.5"]) {
        expectInvalid(await send("GET", `/api/v1/webhooks?limit=${limit}`, { token }), ["query.limit"]);
        expectInvalid(await send("GET", `/api/v1/webhooks/${w.id}/deliveries?limit=${limit}`, { token }), [
          "query.limit",
        ]);
      }
      const junkCursor = btoa(JSON.stringify({ x: 1 })).replace(/=+$/, "");
      for (const cursor of ["!!!", "bm90IGpzb24", junkCursor]) {
        expectInvalid(await send("GET", `/api/v1/webhooks?cursor=${cursor}`, { token }), ["query.cursor"]);
        expectInvalid(await send("GET", `/api/v1/webhooks/${w.id}/deliveries?cursor=${cursor}`, { token }), [
          "query.cursor",
        ]);
      }
      expectInvalid(await send("GET", "/api/v1/webhooks?enabled=yes", { token }), ["query.enabled"]);
      expectInvalid(await send("GET", "/api/v1/webhooks?event=message.lost", { token }), ["query.event"]);
      const q = (s: string) => send("GET", `/api/v1/webhooks/${w.id}/deliveries?${s}`, { token });
      expectInvalid(await q("status=lost"), ["query.status"]);
      expectInvalid(await q("event_type=nope"), ["query.event_type"]);
      expectInvalid(await q("event_id=evt_1"), ["query.event_id"]);
      expectInvalid(await q("since=yesterday&until=2026-13-01"), ["query.since", "query.until"]);
    });

    it("unknown routes answer 404; under /api/v1 authentication comes first", async () => {
      const { token } = await newProject();
      expectProblem(await send("GET", "/api/v1/nothing-here", { token }), 404, "not_found");
      expectProblem(await send("GET", "/api/v1/nothing-here"), 401, "unauthorized");
      expectProblem(await send("GET", "/nothing-here"), 404, "not_found");
      expectProblem(await send("GET", "/api/v2/webhooks", { token }), 404, "not_found");
    });

    it("a known path with a method it does not take answers 405 with Allow", async () => {
      const { token, api } = await newProject();
      const w = await createWebhook(api);
      const id = w.id;
      const cases: [string, string, string][] = [
        ["PUT", "/api/v1/webhooks", "GET, HEAD, POST"],
        ["DELETE", "/api/v1/webhooks", "GET, HEAD, POST"],
        ["POST", `/api/v1/webhooks/${id}`, "DELETE, GET, HEAD, PATCH"],
        ["GET", `/api/v1/webhooks/${id}/rotate`, "POST"],
        ["DELETE", `/api/v1/webhooks/${id}/deliveries`, "GET, HEAD"],
        ["PATCH", `/api/v1/webhooks/deliveries/${crypto.randomUUID()}`, "GET, HEAD"],
        ["GET", "/api/v1/events", "POST"],
        ["DELETE", `/api/v1/events/evt_${"0".repeat(32)}`, "GET, HEAD"],
        ["POST", "/healthz", "GET, HEAD"],
        ["DELETE", "/openapi.json", "GET, HEAD"],
      ];
      for (const [method, path, allow] of cases) {
        const res = await send(method, path, { token, json: method === "GET" ? undefined : {} });
        const body = expectProblem(res, 405, "method_not_allowed");
        expect(res.response.headers.get("allow"), `${method} ${path}`).toBe(allow);
        expect(body.detail).toContain(method);
      }
      // Authentication still comes first under /api/v1.
      expectProblem(await send("PUT", "/api/v1/webhooks"), 401, "unauthorized");
    });

    it("unknown body fields are refused by name on every operation that takes a body", async () => {
      const { token, api } = await newProject();
      const w = await createWebhook(api);
      const cases: [string, string, unknown, string[]][] = [
        ["POST", "/api/v1/webhooks", { url: receiverUrl(), evnets: [SENT], events: [SENT] }, ["body.evnets"]],
        ["PATCH", `/api/v1/webhooks/${w.id}`, { enabled: true, enabeld: false }, ["body.enabeld"]],
        ["POST", `/api/v1/webhooks/${w.id}/rotate`, { grace_period: 60 }, ["body.grace_period"]],
        ["POST", `/api/v1/webhooks/${w.id}/test`, { typ: SENT }, ["body.typ"]],
        [
          "POST",
          `/api/v1/webhooks/${w.id}/recover`,
          { since: new Date().toISOString(), untill: "x" },
          ["body.untill"],
        ],
        [
          "POST",
          "/api/v1/events",
          { type: DELIVERED, data: messageData(), resource: "x" },
          ["body.resource"],
        ],
        [
          "POST",
          "/api/v1/events",
          { type: DELIVERED, data: { ...messageData(), mesage_id: "x" } },
          ["body.data.mesage_id"],
        ],
      ];
      for (const [method, path, json, paths] of cases) {
        const issues = expectInvalid(await send(method, path, { token, json }), paths);
        for (const i of issues) expect(i.message).toMatch(/ is not a field of this request$/);
      }
    });

    it("validation messages are Herald's, naming the field, never the schema library's", async () => {
      const { token, api } = await newProject();
      const w = await createWebhook(api);
      const messages = async (res: Promise<{ response: Response; error: unknown }>) =>
        ((await res).error as { errors: { path: string; message: string }[] }).errors;
      expect(await messages(send("GET", "/api/v1/webhooks?limit=abc", { token }))).toEqual([
        { path: "query.limit", message: "limit must be an integer from 1 to 100" },
      ]);
      expect(await messages(send("GET", "/api/v1/webhooks?limit=0", { token }))).toEqual([
        { path: "query.limit", message: "limit must be an integer from 1 to 100" },
      ]);
      expect(await messages(send("POST", "/api/v1/webhooks", { token, json: { events: [SENT] } }))).toEqual([
        { path: "body.url", message: "url is required" },
      ]);
      expect(await messages(send("POST", "/api/v1/webhooks", { token, json: [] }))).toEqual([
        { path: "body", message: "the request body must be a JSON object" },
      ]);
      expect(
        await messages(
          send("POST", `/api/v1/webhooks/${w.id}/rotate`, { token, json: { grace_period_seconds: -1 } }),
        ),
      ).toEqual([
        {
          path: "body.grace_period_seconds",
          message: "grace_period_seconds must be an integer from 0 to 604800",
        },
      ]);
      const everything = [
        await send("POST", "/api/v1/webhooks", { token, json: { url: 1, events: "x", description: [] } }),
        await send("PATCH", `/api/v1/webhooks/${w.id}`, { token, json: { enabled: "no", url: null } }),
        await send("POST", "/api/v1/events", {
          token,
          json: { type: 3, data: "x", occurred_at: "yesterday" },
        }),
        await send("POST", "/api/v1/events", {
          token,
          json: {
            type: DELIVERED,
            data: { ...messageData(), message_id: "m-1", channel: "fax", recipient: 7 },
          },
        }),
        await send("GET", `/api/v1/webhooks/${w.id}/deliveries?status=x&since=never&event_id=1`, { token }),
        await send("POST", `/api/v1/webhooks/${w.id}/recover`, { token, json: { since: 5 } }),
        await send("POST", "/api/v1/events", { token, headers: { "Idempotency-Key": "é" }, json: {} }),
      ];
      for (const res of everything) {
        const issues = expectProblem(res, 422, "validation_failed").errors ?? [];
        expect(issues.length).toBeGreaterThan(0);
        for (const i of issues) {
          const field = i.path.split(".").slice(1).join(".");
          expect(i.message.startsWith(`${field} `), `${i.path}: ${i.message}`).toBe(true);
          expect(i.message).not.toMatch(
            /Invalid input|expected \w+, received|Too (small|big)|Unrecognized key/i,
          );
        }
      }
    });

    it("text with NUL or an unpaired surrogate is refused with 422 and its path, never stored", async () => {
      const { token, api } = await newProject();
      const headers = { "Content-Type": "application/json" };
      const post = (path: string, body: string) => send("POST", path, { token, headers, body });
      const url = receiverUrl();
      expectInvalid(
        await post("/api/v1/webhooks", `{"url":"${url}","events":["${SENT}"],"description":"a\\u0000b"}`),
        ["body.description"],
      );
      expectInvalid(
        await post("/api/v1/webhooks", `{"url":"${url}","events":["${SENT}"],"description":"\\udbcb!"}`),
        ["body.description"],
      );
      const data = JSON.stringify({ ...messageData(), metadata: { list: [1, { "k\u0000": 1 }] } });
      expectInvalid(await post("/api/v1/events", `{"type":"${DELIVERED}","data":${data}}`), [
        "body.data.metadata.list.1.k\u0000",
      ]);
      // A proper pair (an emoji written as escapes) is fine.
      const ok = await post(
        "/api/v1/webhooks",
        `{"url":"${url}","events":["${SENT}"],"description":"\\ud83d\\ude00"}`,
      );
      expect(ok.response.status).toBe(201);
      expect((ok.error as { description: string }).description).toBe("😀");
      expect((await api.GET("/api/v1/webhooks")).data?.data).toHaveLength(1);
    });

    it("free-form metadata is limited in depth, size and string length (422 with the path, never a 500)", async () => {
      const { token } = await newProject();
      const headers = { "Content-Type": "application/json" };
      // Bodies as text: a 5,000-level value is deeper than JSON.stringify itself can go.
      const raw = (dataJson: string) =>
        send("POST", "/api/v1/events", {
          token,
          headers,
          body: `{"type":"${DELIVERED}","data":${dataJson}}`,
        });
      const withMetadata = (metadataJson: string) => {
        const data = JSON.stringify({ ...messageData(), metadata: null });
        return raw(data.replace('"metadata":null', `"metadata":${metadataJson}`));
      };
      const deepObject = `${'{"a":'.repeat(5_000)}{}${"}".repeat(5_000)}`;
      const deepArray = `${"[".repeat(5_000)}${"]".repeat(5_000)}`;
      expect(deepObject.length).toBeGreaterThan(25_000);
      const [issue] = expectInvalid(await withMetadata(deepObject), [`body.data.metadata${".a".repeat(10)}`]);
      expect(issue!.message).toContain("at most 10 levels");
      let ten: Record<string, unknown> = { leaf: "ok" };
      for (let i = 0; i < 9; i++) ten = { a: ten };
      expect((await withMetadata(JSON.stringify(ten))).response.status).toBe(202);
      const wide = Object.fromEntries(Array.from({ length: 501 }, (_, i) => [`k${i}`, i]));
      expect(
        expectInvalid(await withMetadata(JSON.stringify(wide)), ["body.data.metadata"])[0]!.message,
      ).toContain("at most 500");
      const long = JSON.stringify({ s: "x".repeat(8193) });
      expect(expectInvalid(await withMetadata(long), ["body.data.metadata.s"])[0]!.message).toContain(
        "8192 characters",
      );
      const longKey = JSON.stringify({ list: [1, { [`${"k".repeat(257)}`]: 1 }] });
      expect(expectInvalid(await withMetadata(longKey), ["body.data.metadata.list.1"])[0]!.message).toContain(
        "256 characters",
      );
      // A deep value anywhere else is refused without a 500 as well.
      for (const res of [
        await withMetadata(`{"a":${deepArray}}`),
        await raw(deepArray),
        await raw(deepObject),
        await raw(
          JSON.stringify({ ...messageData(), reason: null }).replace(
            '"reason":null',
            `"reason":${deepArray}`,
          ),
        ),
      ]) {
        expect(res.response.status, res.text.slice(0, 200)).toBe(422);
      }
      const webhook = await send("POST", "/api/v1/webhooks", {
        token,
        headers,
        body: `{"url":"${receiverUrl()}","events":["${SENT}"],"description":${deepArray}}`,
      });
      expectInvalid(webhook, ["body.description"]);
    });
  });
}
