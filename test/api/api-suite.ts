import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createHeraldClient,
  type Delivery,
  type EventType,
  HeraldApiError,
  type HeraldClient,
  paginate,
  unwrap,
  type Webhook,
} from "../../clients/typescript/client.ts";
import { DeliverySchema } from "../../src/adapters/http/routes/deliveries/schema.ts";
import { EventSchema, PublishedEventSchema } from "../../src/adapters/http/routes/events/schema.ts";
import { WebhookSchema, WebhookWithSecretSchema } from "../../src/adapters/http/routes/webhooks/schema.ts";
import type { IssuedApiToken } from "../support/api-harness.ts";
import type { HoldingReceiver } from "../support/holding-receiver.ts";

/** Where the suite sends its requests: the app in-process, or a real server over the network. */
export interface ApiTarget {
  /** e.g. http://127.0.0.1:8080; any origin when `fetch` is given. */
  baseUrl: string;
  /** Sends requests somewhere other than the network (in-process: `(req) => app.fetch(req)`). */
  fetch?: (request: Request) => Promise<Response>;
  /** A token for a new project (of the given tenant, or a new one). */
  newToken(scope?: { tenantId?: string }): Promise<IssuedApiToken>;
  /** Revokes a token issued by `newToken`; the revoked-token test is skipped without it. */
  revokeToken?(token: string): Promise<void>;
  /** True when a delivery engine runs behind the target, so pending deliveries may be attempted while a test looks. */
  deliversInBackground: boolean;
  /**
   * With a background engine: a receiver the engine can reach that holds each request until released, so
   * a test can act while an attempt is in flight instead of racing the engine.
   */
  holdingReceiver?(): Promise<HoldingReceiver>;
}

const WEBHOOK_KEYS = [
  "created_at",
  "description",
  "disabled_reason",
  "enabled",
  "events",
  "id",
  "updated_at",
  "url",
];
const ENVELOPE_KEYS = [
  "data",
  "id",
  "occurred_at",
  "project_id",
  "resource_id",
  "tenant_id",
  "type",
  "version",
];
const DELIVERY_KEYS = [
  "attempt",
  "attempted_at",
  "created_at",
  "duration_ms",
  "error",
  "event_id",
  "event_type",
  "id",
  "next_attempt_at",
  "response_body",
  "response_status",
  "scheduled_at",
  "status",
  "trigger",
  "url",
  "webhook_id",
].sort();
const PROBLEM_KEYS = ["code", "detail", "request_id", "status", "title", "type"];

const SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const EVENT_ID = /^evt_[0-9a-f]{32}$/;

const DELIVERED: EventType = "message.delivered";
const SENT: EventType = "message.sent";

/** A checked endpoint answer (no secret). */
function expectWebhook(body: unknown): Webhook {
  expect(Object.keys(body as object).sort()).toEqual(WEBHOOK_KEYS);
  const w = WebhookSchema.parse(body);
  expect(w.id).toMatch(UUID);
  expect(w.created_at).toMatch(SECONDS);
  expect(w.updated_at).toMatch(MILLIS);
  return w;
}

/** A checked endpoint answer carrying a freshly issued secret. */
function expectWebhookWithSecret(body: unknown) {
  expect(Object.keys(body as object).sort()).toEqual([...WEBHOOK_KEYS, "secret"].sort());
  const w = WebhookWithSecretSchema.parse(body);
  expect(w.secret).toMatch(SECRET);
  expect(w.created_at).toMatch(SECONDS);
  expect(w.updated_at).toMatch(MILLIS);
  return w;
}

function expectDelivery(body: unknown): Delivery {
  expect(Object.keys(body as object).sort()).toEqual(DELIVERY_KEYS);
  const d = DeliverySchema.parse(body);
  expect(d.id).toMatch(UUID);
  for (const t of [d.created_at, d.scheduled_at, d.attempted_at, d.next_attempt_at]) {
    if (t !== null) expect(t).toMatch(MILLIS);
  }
  return d;
}

function expectEnvelope(body: unknown, withEndpoints: boolean) {
  const keys = withEndpoints ? [...ENVELOPE_KEYS, "endpoints"].sort() : ENVELOPE_KEYS;
  expect(Object.keys(body as object).sort()).toEqual(keys);
  const e = (withEndpoints ? PublishedEventSchema : EventSchema).parse(body);
  expect(e.id).toMatch(EVENT_ID);
  expect(e.version).toBe("1");
  expect(e.occurred_at).toMatch(MILLIS);
  return e;
}

const ProblemBody = z.object({
  type: z.string(),
  title: z.string().min(1),
  status: z.number(),
  detail: z.string().min(1),
  code: z.string(),
  request_id: z.string().min(1),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});

/** Asserts an RFC 9457 answer with this status and code, and returns its body. */
function expectProblem(result: { response: Response; error?: unknown }, status: number, code: string) {
  expect(result.response.status).toBe(status);
  expect(result.response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  const body = ProblemBody.parse(result.error);
  const keys = code === "validation_failed" ? [...PROBLEM_KEYS, "errors"].sort() : PROBLEM_KEYS;
  expect(Object.keys(body).sort()).toEqual(keys);
  expect(body.status).toBe(status);
  expect(body.code).toBe(code);
  expect(body.type).toBe(`https://herald.dev/problems/${code}`);
  return body;
}

/** Asserts a 422 whose errors name exactly these paths (in any order), and returns the issues. */
function expectInvalid(result: { response: Response; error?: unknown }, paths: string[]) {
  const body = expectProblem(result, 422, "validation_failed");
  expect(body.errors?.map((e) => e.path).sort()).toEqual([...paths].sort());
  for (const e of body.errors ?? []) expect(e.message.length).toBeGreaterThan(0);
  return body.errors ?? [];
}

let urlCounter = 0;
const receiverUrl = () => `https://receiver.invalid/hooks/${++urlCounter}`;

function messageData(type: EventType = DELIVERED, messageId: string = crypto.randomUUID()) {
  return {
    message_id: messageId,
    status: type.slice("message.".length),
    channel: "email",
    message_type: "transactional",
    recipient: "ada@example.com",
  };
}

/** The API suite: every call of CONTRACT §4, its errors, and tenancy. Runs against any target. */
export function apiSuite(makeTarget: () => Promise<ApiTarget>): void {
  let target: ApiTarget;

  beforeAll(async () => {
    target = await makeTarget();
  });

  const clientFor = (token?: string): HeraldClient =>
    createHeraldClient({ baseUrl: target.baseUrl, token, fetch: target.fetch });

  /** A client for a brand-new project. */
  const newProject = async (scope?: { tenantId?: string }) => {
    const issued = await target.newToken(scope);
    return { ...issued, api: clientFor(issued.token) };
  };

  /** A request outside the typed client: raw bodies, odd headers. */
  async function send(
    method: string,
    path: string,
    init: { token?: string; headers?: Record<string, string>; body?: string; json?: unknown } = {},
  ): Promise<{ response: Response; error: unknown; text: string }> {
    const headers = new Headers(init.headers);
    if (init.token) headers.set("Authorization", `Bearer ${init.token}`);
    let body = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      if (!headers.has("Content-Type")) headers.set("Content-Type", "application/json");
    }
    const request = new Request(new URL(path, target.baseUrl), { method, headers, body });
    const response = await (target.fetch ?? fetch)(request);
    const text = await response.text();
    let error: unknown = text;
    try {
      error = JSON.parse(text);
    } catch {}
    return { response, error, text };
  }

  const createWebhook = (api: HeraldClient, events: EventType[] = [DELIVERED], description?: string) =>
    unwrap(api.POST("/api/v1/webhooks", { body: { url: receiverUrl(), events, description } }));

  const publish = (api: HeraldClient, type: EventType = DELIVERED, key?: string) =>
    unwrap(
      api.POST("/api/v1/events", {
        body: { type, data: messageData(type) },
        params: { header: key ? { "idempotency-key": key } : {} },
      }),
    );

  const deliveriesOf = async (api: HeraldClient, webhookId: string, query: Record<string, string> = {}) =>
    (
      await unwrap(
        api.GET("/api/v1/webhooks/{id}/deliveries", { params: { path: { id: webhookId }, query } }),
      )
    ).data;

  /** Statuses a first attempt may show: pending, or whatever a background engine made of it already. */
  const pendingOrAttempted = () =>
    target.deliversInBackground ? ["pending", "failed", "succeeded"] : ["pending"];

  describe("webhooks", () => {
    it("POST /webhooks registers an endpoint and shows its secret once (201, Location)", async () => {
      const { api } = await newProject();
      const url = receiverUrl();
      const { data, response } = await api.POST("/api/v1/webhooks", {
        body: { url, events: [DELIVERED, SENT], description: "orders" },
      });
      expect(response.status).toBe(201);
      const w = expectWebhookWithSecret(data);
      expect(w).toMatchObject({
        url,
        events: [DELIVERED, SENT],
        enabled: true,
        description: "orders",
        disabled_reason: null,
      });
      expect(response.headers.get("location")).toBe(`/api/v1/webhooks/${w.id}`);
      const bare = await unwrap(api.POST("/api/v1/webhooks", { body: { url, events: [SENT] } }));
      expect(bare.description).toBeNull();
      expect(bare.secret).not.toBe(w.secret);
    });

    it("POST /webhooks ignores unknown fields and cannot set server-owned ones", async () => {
      const { token } = await newProject();
      const url = receiverUrl();
      const res = await send("POST", "/api/v1/webhooks", {
        token,
        json: {
          url,
          events: [SENT],
          id: "00000000-0000-4000-8000-000000000000",
          enabled: false,
          secret: "whsec_x",
          extra: 1,
        },
      });
      expect(res.response.status).toBe(201);
      const w = expectWebhookWithSecret(res.error);
      expect(w).toMatchObject({ url, enabled: true, disabled_reason: null });
      expect(w.id).not.toBe("00000000-0000-4000-8000-000000000000");
      expect(w.secret).not.toBe("whsec_x");
    });

    it("GET /webhooks/{id} and GET /webhooks never show the secret", async () => {
      const { api } = await newProject();
      const created = await createWebhook(api);
      const { secret, ...rest } = created;
      const got = expectWebhook(
        await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path: { id: created.id } } })),
      );
      expect(got).toEqual(rest);
      const list = await unwrap(api.GET("/api/v1/webhooks"));
      expect(list.data).toHaveLength(1);
      expectWebhook(list.data[0]);
      expect(list.next_cursor).toBeNull();
      expect(JSON.stringify(list)).not.toContain(secret);
      expect(JSON.stringify(list)).not.toContain("whsec_");
    });

    it("GET /webhooks filters by enabled and event, newest first", async () => {
      const { api } = await newProject();
      const a = await createWebhook(api, [DELIVERED]);
      const b = await createWebhook(api, [SENT]);
      const c = await createWebhook(api, [DELIVERED, SENT]);
      await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", { params: { path: { id: b.id } }, body: { enabled: false } }),
      );
      const ids = async (query: Record<string, string>) =>
        (await unwrap(api.GET("/api/v1/webhooks", { params: { query } }))).data.map((w) => w.id);
      expect(await ids({})).toEqual([c.id, b.id, a.id]);
      expect(await ids({ enabled: "true" })).toEqual([c.id, a.id]);
      expect(await ids({ enabled: "false" })).toEqual([b.id]);
      expect(await ids({ event: SENT })).toEqual([c.id, b.id]);
      expect(await ids({ event: DELIVERED, enabled: "true" })).toEqual([c.id, a.id]);
    });

    it("GET /webhooks pages with limit and next_cursor without duplicates or gaps", async () => {
      const { api } = await newProject();
      const created: string[] = [];
      for (let i = 0; i < 7; i++) created.push((await createWebhook(api)).id);
      const sizes: number[] = [];
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await unwrap(api.GET("/api/v1/webhooks", { params: { query: { limit: 3, cursor } } }));
        sizes.push(page.data.length);
        seen.push(...page.data.map((w) => w.id));
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      expect(sizes).toEqual([3, 3, 1]);
      expect(seen).toEqual([...created].reverse());
      const walked: string[] = [];
      for await (const w of paginate((c) =>
        unwrap(api.GET("/api/v1/webhooks", { params: { query: { limit: 2, cursor: c } } })),
      )) {
        walked.push(w.id);
      }
      expect(walked).toEqual(seen);
    });

    it("PATCH /webhooks/{id} changes fields; enabled:false disables it as manual", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api, [DELIVERED], "before");
      const path = { id: w.id };
      const url = receiverUrl();
      const changed = expectWebhook(
        await unwrap(
          api.PATCH("/api/v1/webhooks/{id}", {
            params: { path },
            body: { url, events: [SENT], description: null },
          }),
        ),
      );
      expect(changed).toMatchObject({ id: w.id, url, events: [SENT], description: null, enabled: true });
      expect(changed.created_at).toBe(w.created_at);
      expect(Date.parse(changed.updated_at)).toBeGreaterThanOrEqual(Date.parse(w.updated_at));

      const off = await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body: { enabled: false } }),
      );
      expect(off).toMatchObject({ enabled: false, disabled_reason: "manual", url });
      const on = await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body: { enabled: true } }),
      );
      expect(on).toMatchObject({ enabled: true, disabled_reason: null });
    });

    it("POST /webhooks/{id}/rotate issues a new secret, with or without a body", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      const path = { id: w.id };
      const noBody = await api.POST("/api/v1/webhooks/{id}/rotate", { params: { path } });
      expect(noBody.response.status).toBe(200);
      const r1 = expectWebhookWithSecret(noBody.data);
      expect(r1.secret).not.toBe(w.secret);
      const r2 = expectWebhookWithSecret(
        await unwrap(api.POST("/api/v1/webhooks/{id}/rotate", { params: { path }, body: {} })),
      );
      const r3 = expectWebhookWithSecret(
        await unwrap(
          api.POST("/api/v1/webhooks/{id}/rotate", {
            params: { path },
            body: { grace_period_seconds: 604800 },
          }),
        ),
      );
      expect(new Set([w.secret, r1.secret, r2.secret, r3.secret]).size).toBe(4);
      const got = await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path } }));
      expect(JSON.stringify(got)).not.toContain("whsec_");
    });

    it("POST /webhooks/{id}/rotate accepts an empty body sent as application/json", async () => {
      const { api, token } = await newProject();
      const w = await createWebhook(api);
      const res = await send("POST", `/api/v1/webhooks/${w.id}/rotate`, {
        token,
        headers: { "Content-Type": "application/json" },
        body: "",
      });
      expect(res.response.status).toBe(200);
      expectWebhookWithSecret(res.error);
    });

    it("POST /webhooks/{id}/rotate rejects a grace period outside 0-604800", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      for (const grace of [-1, 604801, 1.5]) {
        const res = await api.POST("/api/v1/webhooks/{id}/rotate", {
          params: { path: { id: w.id } },
          body: { grace_period_seconds: grace },
        });
        expectInvalid(res, ["body.grace_period_seconds"]);
      }
    });

    it("POST /webhooks/{id}/enable is idempotent and clears disabled_reason", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      const path = { id: w.id };
      const already = expectWebhook(
        await unwrap(api.POST("/api/v1/webhooks/{id}/enable", { params: { path } })),
      );
      expect(already).toMatchObject({ enabled: true, disabled_reason: null });
      await unwrap(api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body: { enabled: false } }));
      for (let i = 0; i < 2; i++) {
        const res = await api.POST("/api/v1/webhooks/{id}/enable", { params: { path } });
        expect(res.response.status).toBe(200);
        expect(res.data).toMatchObject({ id: w.id, enabled: true, disabled_reason: null });
      }
    });

    it("DELETE /webhooks/{id} answers 204, then 404, and cancels its pending deliveries", async () => {
      const { api } = await newProject();
      // With an engine running behind the target, the delivery is held in flight at the receiver while
      // the endpoint is deleted, so what the test sees does not depend on who wins a race.
      const holding = target.deliversInBackground ? await target.holdingReceiver?.() : undefined;
      if (target.deliversInBackground && !holding)
        throw new Error("a background engine needs holdingReceiver");
      const w = holding
        ? await unwrap(api.POST("/api/v1/webhooks", { body: { url: holding.url, events: [DELIVERED] } }))
        : await createWebhook(api);
      await publish(api);
      await holding?.held(1);
      const [pending] = await deliveriesOf(api, w.id);
      expect(pending).toBeDefined();
      expect(pending!.status).toBe("pending");
      const del = await api.DELETE("/api/v1/webhooks/{id}", { params: { path: { id: w.id } } });
      expect(del.response.status).toBe(204);
      expect(del.data).toBeUndefined();
      expectProblem(
        await api.GET("/api/v1/webhooks/{id}", { params: { path: { id: w.id } } }),
        404,
        "not_found",
      );
      expectProblem(
        await api.DELETE("/api/v1/webhooks/{id}", { params: { path: { id: w.id } } }),
        404,
        "not_found",
      );
      expectProblem(
        await api.GET("/api/v1/webhooks/{id}/deliveries", { params: { path: { id: w.id } } }),
        404,
        "not_found",
      );
      const after = await unwrap(
        api.GET("/api/v1/webhooks/deliveries/{delivery_id}", {
          params: { path: { delivery_id: pending!.id } },
        }),
      );
      expect(after.status).toBe("cancelled");
      expect((await unwrap(api.GET("/api/v1/webhooks"))).data).toEqual([]);
      if (holding) {
        // The attempt in flight ends; its answer does not bring the cancelled delivery back.
        holding.release(200);
        const settled = await unwrap(
          api.GET("/api/v1/webhooks/deliveries/{delivery_id}", {
            params: { path: { delivery_id: pending!.id } },
          }),
        );
        expect(settled.status).toBe("cancelled");
        expect(holding.received).toBe(1);
        await holding.close();
      }
    });
  });

  describe("events", () => {
    it("POST /events answers 202 with the envelope and fans out to subscribed endpoints only", async () => {
      const { api, tenant_id, project_id } = await newProject();
      const a = await createWebhook(api, [DELIVERED]);
      const b = await createWebhook(api, [DELIVERED, SENT]);
      const off = await createWebhook(api, [DELIVERED]);
      const other = await createWebhook(api, [SENT]);
      await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", { params: { path: { id: off.id } }, body: { enabled: false } }),
      );

      const data = messageData(DELIVERED);
      const res = await api.POST("/api/v1/events", { body: { type: DELIVERED, data } });
      expect(res.response.status).toBe(202);
      expect(res.response.headers.get("idempotent-replayed")).toBeNull();
      const event = expectEnvelope(res.data, true);
      expect(event).toMatchObject({
        type: DELIVERED,
        tenant_id,
        project_id,
        resource_id: data.message_id,
        data,
        endpoints: 3,
      });

      for (const w of [a, b]) {
        const ds = (await deliveriesOf(api, w.id)).map(expectDelivery);
        expect(ds).toHaveLength(1);
        expect(ds[0]).toMatchObject({
          webhook_id: w.id,
          event_id: event.id,
          event_type: DELIVERED,
          attempt: 1,
          trigger: "automatic",
          url: w.url,
        });
        expect(pendingOrAttempted()).toContain(ds[0]!.status);
      }
      const skipped = await deliveriesOf(api, off.id);
      expect(skipped).toHaveLength(1);
      expect(skipped[0]).toMatchObject({
        status: "skipped",
        attempt: 1,
        attempted_at: null,
        response_status: null,
        error: null,
      });
      expect(await deliveriesOf(api, other.id)).toEqual([]);
    });

    it("POST /events with no subscriber answers endpoints: 0; occurred_at is kept with milliseconds", async () => {
      const { api } = await newProject();
      const res = await unwrap(
        api.POST("/api/v1/events", {
          body: { type: SENT, data: messageData(SENT), occurred_at: "2026-11-21T10:00:00+01:00" },
        }),
      );
      expect(res.endpoints).toBe(0);
      expect(res.occurred_at).toBe("2026-11-21T09:00:00.000Z");
    });

    it("GET /events/{id} returns the envelope as published", async () => {
      const { api } = await newProject();
      const { endpoints, ...envelope } = await publish(api);
      expect(endpoints).toBe(0);
      const got = await unwrap(api.GET("/api/v1/events/{id}", { params: { path: { id: envelope.id } } }));
      expectEnvelope(got, false);
      expect(got).toEqual(envelope);
    });

    it("an Idempotency-Key repeat returns the first answer without a second fan-out", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      const key = `order-${crypto.randomUUID()}`;
      const body = { type: DELIVERED, data: messageData(DELIVERED) };
      const first = await api.POST("/api/v1/events", {
        body,
        params: { header: { "idempotency-key": key } },
      });
      const again = await api.POST("/api/v1/events", {
        body,
        params: { header: { "idempotency-key": key } },
      });
      expect(first.response.status).toBe(202);
      expect(again.response.status).toBe(202);
      expect(again.response.headers.get("idempotent-replayed")).toBe("true");
      expect(again.data).toEqual(first.data);
      const firstAttempts = (await deliveriesOf(api, w.id)).filter((d) => d.attempt === 1);
      expect(firstAttempts).toHaveLength(1);
      expect(firstAttempts[0]!.event_id).toBe(first.data!.id);

      const other = await api.POST("/api/v1/events", {
        body: { type: DELIVERED, data: messageData(DELIVERED) },
        params: { header: { "idempotency-key": key } },
      });
      expectProblem(other, 409, "conflict");
      const fresh = await publish(api, DELIVERED, `${key}-2`);
      expect(fresh.id).not.toBe(first.data!.id);
    });

    it("POST /events validates the Idempotency-Key header", async () => {
      const { api } = await newProject();
      const res = await api.POST("/api/v1/events", {
        body: { type: DELIVERED, data: messageData(DELIVERED) },
        params: { header: { "idempotency-key": "k".repeat(256) } },
      });
      expectInvalid(res, ["header.idempotency-key"]);
    });

    it("POST /events rejects an unknown type, bad data and a foreign resource_id with 422", async () => {
      const { token } = await newProject();
      const post = (json: unknown) => send("POST", "/api/v1/events", { token, json });
      const unknown = expectInvalid(await post({ type: "message.teleported", data: {} }), ["body.type"]);
      expect(unknown[0]!.message).toContain("message.teleported");
      expectInvalid(await post({ data: messageData() }), ["body.type"]);
      expectInvalid(await post({ type: DELIVERED }), ["body.data"]);
      expectInvalid(await post({ type: DELIVERED, data: "text" }), ["body.data"]);
      const badStatus = expectInvalid(
        await post({ type: DELIVERED, data: { ...messageData(), status: "sent" } }),
        ["body.data.status"],
      );
      expect(badStatus[0]!.message).toContain("delivered");
      expectInvalid(
        await post({ type: DELIVERED, data: { ...messageData(), recipient: "not-an-address" } }),
        ["body.data.recipient"],
      );
      expectInvalid(
        await post({ type: DELIVERED, data: { ...messageData(), message_id: "m-1", channel: "fax" } }),
        ["body.data.message_id", "body.data.channel"],
      );
      expectInvalid(await post({ type: DELIVERED, data: messageData(), resource_id: crypto.randomUUID() }), [
        "body.resource_id",
      ]);
      expectInvalid(await post({ type: DELIVERED, data: messageData(), occurred_at: "yesterday" }), [
        "body.occurred_at",
      ]);
    });
  });

  describe("deliveries", () => {
    it("GET /webhooks/deliveries/{delivery_id} returns one record", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      const event = await publish(api);
      const [listed] = await deliveriesOf(api, w.id);
      const got = expectDelivery(
        await unwrap(
          api.GET("/api/v1/webhooks/deliveries/{delivery_id}", {
            params: { path: { delivery_id: listed!.id } },
          }),
        ),
      );
      expect(got).toMatchObject({ id: listed!.id, webhook_id: w.id, event_id: event.id, attempt: 1 });
    });

    it("GET /webhooks/{id}/deliveries filters by status, event_type, event_id, since and until", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api, [DELIVERED, SENT]);
      const e1 = await publish(api, DELIVERED);
      const e2 = await publish(api, SENT);
      const e3 = await publish(api, DELIVERED);
      const all = (await deliveriesOf(api, w.id)).filter((d) => d.attempt === 1);
      expect(all.map((d) => d.event_id)).toEqual([e3.id, e2.id, e1.id]);

      const byType = await deliveriesOf(api, w.id, { event_type: SENT });
      expect(byType.length).toBeGreaterThan(0);
      expect(byType.every((d) => d.event_type === SENT && d.event_id === e2.id)).toBe(true);
      const byEvent = await deliveriesOf(api, w.id, { event_id: e1.id });
      expect(byEvent.length).toBeGreaterThan(0);
      expect(byEvent.every((d) => d.event_id === e1.id)).toBe(true);
      const none = await deliveriesOf(api, w.id, { status: "cancelled" });
      expect(none).toEqual([]);
      if (!target.deliversInBackground) {
        expect((await deliveriesOf(api, w.id, { status: "pending" })).map((d) => d.event_id)).toEqual([
          e3.id,
          e2.id,
          e1.id,
        ]);
      }

      const pivot = all[1]!.created_at;
      const since = await deliveriesOf(api, w.id, { since: pivot });
      const until = await deliveriesOf(api, w.id, { until: pivot });
      expect(since.every((d) => Date.parse(d.created_at) >= Date.parse(pivot))).toBe(true);
      expect(until.every((d) => Date.parse(d.created_at) < Date.parse(pivot))).toBe(true);
      expect(since.map((d) => d.event_id)).toContain(e2.id);
      expect(until.map((d) => d.event_id)).not.toContain(e2.id);
      const future = new Date(Date.now() + 3_600_000).toISOString();
      expect(await deliveriesOf(api, w.id, { since: future })).toEqual([]);
    });

    it("GET /webhooks/{id}/deliveries pages over more than two pages without duplicates or gaps", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      const published: string[] = [];
      for (let i = 0; i < 7; i++) published.push((await publish(api)).id);
      const seen: Delivery[] = [];
      let pages = 0;
      for await (const d of paginate(async (cursor) => {
        pages++;
        return unwrap(
          api.GET("/api/v1/webhooks/{id}/deliveries", {
            params: { path: { id: w.id }, query: { limit: 3, cursor, event_type: DELIVERED } },
          }),
        );
      })) {
        seen.push(d);
      }
      expect(pages).toBeGreaterThanOrEqual(3);
      expect(new Set(seen.map((d) => d.id)).size).toBe(seen.length);
      const created = seen.map((d) => Date.parse(d.created_at));
      expect(created).toEqual([...created].sort((x, y) => y - x));
      const firsts = seen.filter((d) => d.attempt === 1).map((d) => d.event_id);
      expect(firsts).toEqual([...published].reverse());
      if (!target.deliversInBackground) expect(seen).toHaveLength(7);
    });

    it("POST /webhooks/deliveries/{id}/retry queues a manual attempt n+1 (202)", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      const event = await publish(api);
      const [first] = await deliveriesOf(api, w.id);
      const res = await api.POST("/api/v1/webhooks/deliveries/{delivery_id}/retry", {
        params: { path: { delivery_id: first!.id } },
      });
      expect(res.response.status).toBe(202);
      const retried = expectDelivery(res.data);
      expect(retried).toMatchObject({
        webhook_id: w.id,
        event_id: event.id,
        event_type: DELIVERED,
        trigger: "manual",
        status: "pending",
        url: w.url,
        response_status: null,
        error: null,
        attempted_at: null,
        next_attempt_at: null,
      });
      expect(retried.id).not.toBe(first!.id);
      if (target.deliversInBackground) expect(retried.attempt).toBeGreaterThanOrEqual(2);
      else expect(retried.attempt).toBe(2);
      const ids = (await deliveriesOf(api, w.id)).map((d) => d.id);
      expect(ids).toContain(retried.id);
      expect(ids).toContain(first!.id);
    });

    it("retry on a disabled endpoint answers 409 endpoint_disabled; after enable it is accepted", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", { params: { path: { id: w.id } }, body: { enabled: false } }),
      );
      await publish(api);
      const [skipped] = await deliveriesOf(api, w.id);
      expect(skipped!.status).toBe("skipped");
      const path = { delivery_id: skipped!.id };
      const refused = expectProblem(
        await api.POST("/api/v1/webhooks/deliveries/{delivery_id}/retry", { params: { path } }),
        409,
        "endpoint_disabled",
      );
      expect(refused.detail).toContain("manual");
      await unwrap(api.POST("/api/v1/webhooks/{id}/enable", { params: { path: { id: w.id } } }));
      const again = await unwrap(
        api.POST("/api/v1/webhooks/deliveries/{delivery_id}/retry", { params: { path } }),
      );
      expect(again).toMatchObject({ trigger: "manual", status: "pending", attempt: 2 });
    });
  });

  describe("test events and recovery", () => {
    const HOUR = 3_600_000;
    const iso = (ms: number) => new Date(ms).toISOString();

    it("POST /webhooks/{id}/test sends a sample of a subscribed type to that endpoint only (202)", async () => {
      const { api, tenant_id, project_id } = await newProject();
      const w = await createWebhook(api, [DELIVERED, SENT]);
      const bystander = await createWebhook(api, [SENT]);
      const res = await api.POST("/api/v1/webhooks/{id}/test", {
        params: { path: { id: w.id } },
        body: { type: SENT },
      });
      expect(res.response.status).toBe(202);
      expect(Object.keys(res.data as object).sort()).toEqual(["delivery", "event"]);
      const event = expectEnvelope(res.data!.event, false);
      expect(event).toMatchObject({ type: SENT, tenant_id, project_id });
      expect(event.data).toMatchObject({ status: "sent", message_id: event.resource_id });
      const delivery = expectDelivery(res.data!.delivery);
      expect(delivery).toMatchObject({
        webhook_id: w.id,
        event_id: event.id,
        event_type: SENT,
        attempt: 1,
        trigger: "automatic",
        url: w.url,
      });
      expect(pendingOrAttempted()).toContain(delivery.status);

      expect((await deliveriesOf(api, w.id)).map((d) => d.id)).toEqual([delivery.id]);
      expect(await deliveriesOf(api, bystander.id)).toEqual([]);
      const stored = await unwrap(api.GET("/api/v1/events/{id}", { params: { path: { id: event.id } } }));
      expect(stored).toEqual(event);
    });

    it("POST /webhooks/{id}/test without a body sends the endpoint's first type", async () => {
      const { api, token } = await newProject();
      const w = await createWebhook(api, ["domain.verified", DELIVERED]);
      const bare = await api.POST("/api/v1/webhooks/{id}/test", { params: { path: { id: w.id } } });
      expect(bare.response.status).toBe(202);
      expect(bare.data!.event).toMatchObject({ type: "domain.verified", data: { status: "verified" } });
      const empty = await send("POST", `/api/v1/webhooks/${w.id}/test`, { token, json: {} });
      expect(empty.response.status).toBe(202);
      expect(empty.error).toMatchObject({ event: { type: "domain.verified" } });
      expect(await deliveriesOf(api, w.id)).toHaveLength(2);
    });

    it("POST /webhooks/{id}/test refuses a type the endpoint does not receive, or an unknown one (422)", async () => {
      const { api, token } = await newProject();
      const w = await createWebhook(api, [DELIVERED]);
      const [issue] = expectInvalid(
        await api.POST("/api/v1/webhooks/{id}/test", {
          params: { path: { id: w.id } },
          body: { type: SENT },
        }),
        ["body.type"],
      );
      expect(issue!.message).toContain(DELIVERED);
      const unknown = await send("POST", `/api/v1/webhooks/${w.id}/test`, {
        token,
        json: { type: "message.lost" },
      });
      expect(expectInvalid(unknown, ["body.type"])[0]!.message).toContain('"message.lost"');
      expect(await deliveriesOf(api, w.id)).toEqual([]);
    });

    it("POST /webhooks/{id}/test and /recover answer 409 endpoint_disabled on a disabled endpoint", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      const path = { id: w.id };
      await unwrap(api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body: { enabled: false } }));
      const test = expectProblem(
        await api.POST("/api/v1/webhooks/{id}/test", { params: { path } }),
        409,
        "endpoint_disabled",
      );
      expect(test.detail).toContain("manual");
      expectProblem(
        await api.POST("/api/v1/webhooks/{id}/recover", {
          params: { path },
          body: { since: iso(Date.now() - HOUR) },
        }),
        409,
        "endpoint_disabled",
      );
      expect(await deliveriesOf(api, w.id)).toEqual([]);
    });

    it("POST /webhooks/{id}/test and /recover answer 404 for unknown, malformed and foreign ids", async () => {
      const owner = await newProject();
      const w = await createWebhook(owner.api);
      const stranger = await newProject({ tenantId: owner.tenant_id });
      const since = iso(Date.now() - HOUR);
      const cases = [
        [owner.api, crypto.randomUUID()],
        [owner.api, "nope"],
        [stranger.api, w.id],
      ] as const;
      for (const [api, id] of cases) {
        const path = { id };
        expectProblem(await api.POST("/api/v1/webhooks/{id}/test", { params: { path } }), 404, "not_found");
        expectProblem(
          await api.POST("/api/v1/webhooks/{id}/recover", { params: { path }, body: { since } }),
          404,
          "not_found",
        );
      }
      expect(await deliveriesOf(owner.api, w.id)).toEqual([]);
    });

    it("POST /webhooks/{id}/recover queues one manual delivery per failed or skipped event in the window", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api, [DELIVERED, SENT]);
      const path = { id: w.id };
      const since = iso(Date.now() - HOUR);
      // Events published while the endpoint is disabled get a `skipped` record, which nothing retries.
      await unwrap(api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body: { enabled: false } }));
      const missed = [await publish(api, DELIVERED), await publish(api, SENT)];
      await unwrap(api.POST("/api/v1/webhooks/{id}/enable", { params: { path } }));
      expect((await deliveriesOf(api, w.id)).map((d) => d.status)).toEqual(["skipped", "skipped"]);

      // A window that ends before the outage finds nothing.
      const early = { since: iso(Date.now() - 3 * HOUR), until: iso(Date.now() - 2 * HOUR) };
      const before = await api.POST("/api/v1/webhooks/{id}/recover", { params: { path }, body: early });
      expect(before.response.status).toBe(202);
      expect(before.data).toEqual({ queued: 0, ...early });

      const res = await api.POST("/api/v1/webhooks/{id}/recover", { params: { path }, body: { since } });
      expect(res.response.status).toBe(202);
      expect(Object.keys(res.data as object).sort()).toEqual(["queued", "since", "until"]);
      expect(res.data!.queued).toBe(2);
      expect(res.data!.since).toBe(since);
      expect(res.data!.until).toMatch(MILLIS);
      expect(Date.parse(res.data!.until)).toBeGreaterThan(Date.parse(since));

      const all = (await deliveriesOf(api, w.id)).map(expectDelivery);
      const manual = all.filter((d) => d.trigger === "manual");
      expect(manual.map((d) => d.event_id).sort()).toEqual(missed.map((e) => e.id).sort());
      for (const d of manual) {
        expect(d).toMatchObject({ attempt: 2, webhook_id: w.id, url: w.url });
        expect(pendingOrAttempted()).toContain(d.status);
      }
      if (!target.deliversInBackground) {
        // The latest delivery of each event is now pending: a second recovery queues nothing more.
        const again = await unwrap(
          api.POST("/api/v1/webhooks/{id}/recover", { params: { path }, body: { since } }),
        );
        expect(again.queued).toBe(0);
        expect(await deliveriesOf(api, w.id)).toHaveLength(4);
      }
    });

    it("POST /webhooks/{id}/recover validates the window (422)", async () => {
      const { api, token } = await newProject();
      const w = await createWebhook(api);
      const recover = (json: unknown) => send("POST", `/api/v1/webhooks/${w.id}/recover`, { token, json });
      const now = Date.now();
      const tooLong = expectInvalid(await recover({ since: iso(now - 15 * 24 * HOUR) }), ["body.since"]);
      expect(tooLong[0]!.message).toContain("14 days");
      expectInvalid(await recover({ since: iso(now - 20 * 24 * HOUR), until: iso(now - 5 * 24 * HOUR) }), [
        "body.since",
      ]);
      const backwards = expectInvalid(await recover({ since: iso(now - HOUR), until: iso(now - 2 * HOUR) }), [
        "body.until",
      ]);
      expect(backwards[0]!.message).toContain("after since");
      expectInvalid(await recover({ since: iso(now - HOUR), until: iso(now - HOUR) }), ["body.until"]);
      expectInvalid(await recover({}), ["body.since"]);
      expectInvalid(await recover({ since: "yesterday", until: 5 }), ["body.since", "body.until"]);
      expectInvalid(await send("POST", `/api/v1/webhooks/${w.id}/recover`, { token }), ["body.since"]);
      // Exactly 14 days is allowed.
      const edge = await recover({ since: iso(now - 14 * 24 * HOUR), until: iso(now) });
      expect(edge.response.status).toBe(202);
      expect(edge.error).toMatchObject({ queued: 0 });
    });
  });

  describe("tenancy", () => {
    it("another project gets 404 on every call naming the first project's resources", async () => {
      const owner = await newProject();
      const w = await createWebhook(owner.api);
      const event = await publish(owner.api);
      const [delivery] = await deliveriesOf(owner.api, w.id);
      const sameTenant = await newProject({ tenantId: owner.tenant_id });
      expect(sameTenant.tenant_id).toBe(owner.tenant_id);
      expect(sameTenant.project_id).not.toBe(owner.project_id);
      const otherTenant = await newProject();

      for (const { api } of [sameTenant, otherTenant]) {
        const id = { path: { id: w.id } };
        const did = { path: { delivery_id: delivery!.id } };
        const calls = [
          api.GET("/api/v1/webhooks/{id}", { params: id }),
          api.PATCH("/api/v1/webhooks/{id}", { params: id, body: { description: "mine now" } }),
          api.POST("/api/v1/webhooks/{id}/rotate", { params: id }),
          api.POST("/api/v1/webhooks/{id}/enable", { params: id }),
          api.DELETE("/api/v1/webhooks/{id}", { params: id }),
          api.GET("/api/v1/webhooks/{id}/deliveries", { params: id }),
          api.GET("/api/v1/webhooks/deliveries/{delivery_id}", { params: did }),
          api.POST("/api/v1/webhooks/deliveries/{delivery_id}/retry", { params: did }),
          api.GET("/api/v1/events/{id}", { params: { path: { id: event.id } } }),
        ];
        for (const res of await Promise.all(calls)) expectProblem(res, 404, "not_found");
        expect((await unwrap(api.GET("/api/v1/webhooks"))).data).toEqual([]);
      }

      const still = await unwrap(owner.api.GET("/api/v1/webhooks/{id}", { params: { path: { id: w.id } } }));
      expect(still).toMatchObject({ id: w.id, description: null, enabled: true });
      expect((await deliveriesOf(owner.api, w.id)).filter((d) => d.trigger === "manual")).toEqual([]);
    });

    it("a published event reaches only the publishing project's endpoints", async () => {
      const a = await newProject();
      const b = await newProject({ tenantId: a.tenant_id });
      const wa = await createWebhook(a.api);
      const wb = await createWebhook(b.api);
      const event = await publish(a.api);
      expect(event.endpoints).toBe(1);
      expect((await deliveriesOf(a.api, wa.id)).map((d) => d.event_id)).toEqual([event.id]);
      expect(await deliveriesOf(b.api, wb.id)).toEqual([]);
    });
  });

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
      const blob = new Request(new URL("/api/v1/events", target.baseUrl), {
        method: "POST",
        headers: { Authorization: `Bearer ${token}` },
        body: new Blob([json]),
      });
      const res = await (target.fetch ?? fetch)(blob);
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
      expectProblem(await send("PUT", "/api/v1/webhooks", { token, json: {} }), 404, "not_found");
      expectProblem(await send("GET", "/api/v2/webhooks", { token }), 404, "not_found");
    });

    it("a missing, malformed, unknown or revoked token answers 401", async () => {
      const { token } = await newProject();
      const unknown = `hrld_${"A".repeat(43)}`;
      for (const authorization of [
        undefined,
        "",
        "Bearer",
        `Basic ${btoa("user:pass")}`,
        `Token ${token}`,
        "Bearer not-a-token",
        `Bearer ${token}x`,
        `Bearer ${unknown}`,
      ]) {
        const headers: Record<string, string> =
          authorization === undefined ? {} : { Authorization: authorization };
        const res = await send("GET", "/api/v1/webhooks", { headers });
        const body = expectProblem(res, 401, "unauthorized");
        expect(res.response.headers.get("www-authenticate")).toBe('Bearer realm="herald"');
        expect(JSON.stringify(body)).not.toContain(token);
      }
      expect(
        (await send("GET", "/api/v1/webhooks", { headers: { Authorization: `bearer ${token}` } })).response
          .status,
      ).toBe(200);
      expectProblem(
        await send("POST", "/api/v1/webhooks", { json: { url: receiverUrl(), events: [SENT] } }),
        401,
        "unauthorized",
      );
    });

    it("a revoked token answers 401", async (ctx) => {
      if (!target.revokeToken) return ctx.skip();
      const { token, api } = await newProject();
      expect((await api.GET("/api/v1/webhooks")).response.status).toBe(200);
      await target.revokeToken(token);
      expectProblem(await api.GET("/api/v1/webhooks"), 401, "unauthorized");
    });

    it("unwrap() throws a typed HeraldApiError", async () => {
      const { api } = await newProject();
      const err = await unwrap(
        api.GET("/api/v1/webhooks/{id}", { params: { path: { id: crypto.randomUUID() } } }),
      ).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HeraldApiError);
      expect(err).toMatchObject({ status: 404, code: "not_found", title: "Not Found", errors: [] });
      const invalid = await unwrap(api.GET("/api/v1/webhooks", { params: { query: { limit: 0 } } })).catch(
        (e: unknown) => e as HeraldApiError,
      );
      expect(invalid).toMatchObject({ status: 422, code: "validation_failed" });
      expect((invalid as HeraldApiError).errors.map((e) => e.path)).toEqual(["query.limit"]);
    });
  });

  describe("operations", () => {
    it("GET /healthz and GET /readyz answer 200 without a token", async () => {
      for (const path of ["/healthz", "/readyz"]) {
        const res = await send("GET", path);
        expect(res.response.status).toBe(200);
        expect(res.error).toEqual({ status: "ok" });
      }
    });

    it("GET /metrics answers the Prometheus text format", async () => {
      const res = await send("GET", "/metrics");
      expect(res.response.status).toBe(200);
      expect(res.response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(res.text).toMatch(/^# (HELP|TYPE) /m);
    });

    it("GET /openapi.json answers the OpenAPI 3.1 document; GET /docs the Scalar reference", async () => {
      const doc = await send("GET", "/openapi.json");
      expect(doc.response.status).toBe(200);
      const body = doc.error as { openapi: string; info: { title: string }; paths: Record<string, unknown> };
      expect(body.openapi).toBe("3.1.0");
      expect(body.info.title).toBe("Herald");
      expect(Object.keys(body.paths)).toEqual(
        expect.arrayContaining([
          "/api/v1/webhooks",
          "/api/v1/webhooks/{id}",
          "/api/v1/webhooks/{id}/rotate",
          "/api/v1/webhooks/{id}/enable",
          "/api/v1/webhooks/{id}/test",
          "/api/v1/webhooks/{id}/recover",
          "/api/v1/webhooks/{id}/deliveries",
          "/api/v1/webhooks/deliveries/{delivery_id}",
          "/api/v1/webhooks/deliveries/{delivery_id}/retry",
          "/api/v1/events",
          "/api/v1/events/{id}",
        ]),
      );
      const docs = await send("GET", "/docs");
      expect(docs.response.status).toBe(200);
      expect(docs.response.headers.get("content-type")).toMatch(/^text\/html/);
      expect(docs.text).toContain("/openapi.json");
    });

    it("echoes a sane X-Request-Id and replaces an unsafe one", async () => {
      const given = await send("GET", "/healthz", { headers: { "X-Request-Id": "trace-42.a:b" } });
      expect(given.response.headers.get("x-request-id")).toBe("trace-42.a:b");
      const made = await send("GET", "/healthz", { headers: { "X-Request-Id": "has spaces; and <html>" } });
      expect(made.response.headers.get("x-request-id")).toMatch(UUID);
      const problem = await send("GET", "/nowhere", { headers: { "X-Request-Id": "req-7" } });
      expect(expectProblem(problem, 404, "not_found").request_id).toBe("req-7");
    });
  });
}
