import { beforeAll, expect } from "vitest";
import { z } from "zod";
import {
  createHeraldClient,
  type Delivery,
  type EventType,
  type HeraldClient,
  type PublishEvent,
  unwrap,
  type Webhook,
} from "../../../../../clients/typescript/client.ts";
import { DeliverySchema } from "../../../../../src/adapters/http/routes/deliveries/schema.ts";
import { EventSchema, PublishedEventSchema } from "../../../../../src/adapters/http/routes/events/schema.ts";
import {
  WebhookSchema,
  WebhookWithSecretSchema,
} from "../../../../../src/adapters/http/routes/webhooks/schema.ts";
import type { IssuedApiToken } from "../../../../support/api-harness.ts";
import type { HoldingReceiver } from "../../../../support/holding-receiver.ts";
import type { Receiver } from "../../../../support/receiver.ts";

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
  /**
   * With a background engine: an HTTPS receiver the engine can reach that requires a client certificate
   * signed by `clientCa` (mutual TLS) and answers 200 to every request it lets in.
   */
  mtlsReceiver?(clientCa: string): Promise<Receiver>;
}

export const WEBHOOK_KEYS = [
  "client_certificate",
  "created_at",
  "description",
  "disabled_reason",
  "enabled",
  "events",
  "filter",
  "headers",
  "held",
  "id",
  "kind",
  "ordering",
  "public_key",
  "rate_limit",
  "signature_scheme",
  "updated_at",
  "url",
];
export const ENVELOPE_KEYS = [
  "data",
  "id",
  "occurred_at",
  "project_id",
  "resource_id",
  "tenant_id",
  "type",
  "version",
];
export const DELIVERY_KEYS = [
  "attempt",
  "attempted_at",
  "created_at",
  "duration_ms",
  "erased_at",
  "error",
  "event_id",
  "event_type",
  "id",
  "next_attempt_at",
  "receipt",
  "response_body",
  "response_status",
  "scheduled_at",
  "status",
  "trigger",
  "url",
  "webhook_id",
].sort();
export const PROBLEM_KEYS = ["code", "detail", "request_id", "status", "title", "type"];

export const SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
export const MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
export const EVENT_ID = /^evt_[0-9a-f]{32}$/;

export const DELIVERED: EventType = "message.delivered";
export const SENT: EventType = "message.sent";

/** A checked endpoint answer (no secret). */
export function expectWebhook(body: unknown): Webhook {
  expect(Object.keys(body as object).sort()).toEqual(WEBHOOK_KEYS);
  const w = WebhookSchema.parse(body);
  expect(w.id).toMatch(UUID);
  expect(w.created_at).toMatch(SECONDS);
  expect(w.updated_at).toMatch(MILLIS);
  return w;
}

/** A checked endpoint answer carrying a freshly issued secret. */
export function expectWebhookWithSecret(body: unknown) {
  expect(Object.keys(body as object).sort()).toEqual([...WEBHOOK_KEYS, "secret"].sort());
  const w = WebhookWithSecretSchema.parse(body);
  expect(w.secret).toMatch(SECRET);
  expect(w.created_at).toMatch(SECONDS);
  expect(w.updated_at).toMatch(MILLIS);
  return w;
}

export function expectDelivery(body: unknown): Delivery {
  expect(Object.keys(body as object).sort()).toEqual(DELIVERY_KEYS);
  const d = DeliverySchema.parse(body);
  expect(d.id).toMatch(UUID);
  for (const t of [d.created_at, d.scheduled_at, d.attempted_at, d.next_attempt_at, d.erased_at]) {
    if (t !== null) expect(t).toMatch(MILLIS);
  }
  return d;
}

export function expectEnvelope(body: unknown, withEndpoints: boolean) {
  const keys = withEndpoints ? [...ENVELOPE_KEYS, "endpoints"].sort() : ENVELOPE_KEYS;
  expect(Object.keys(body as object).sort()).toEqual(keys);
  const e = (withEndpoints ? PublishedEventSchema : EventSchema).parse(body);
  expect(e.id).toMatch(EVENT_ID);
  expect(e.version).toBe("1");
  expect(e.occurred_at).toMatch(MILLIS);
  return e;
}

export const ProblemBody = z.object({
  type: z.string(),
  title: z.string().min(1),
  status: z.number(),
  detail: z.string().min(1),
  code: z.string(),
  request_id: z.string().min(1),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});

/** Asserts an RFC 9457 answer with this status and code, and returns its body. */
export function expectProblem(result: { response: Response; error?: unknown }, status: number, code: string) {
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
export function expectInvalid(result: { response: Response; error?: unknown }, paths: string[]) {
  const body = expectProblem(result, 422, "validation_failed");
  expect(body.errors?.map((e) => e.path).sort()).toEqual([...paths].sort());
  for (const e of body.errors ?? []) expect(e.message.length).toBeGreaterThan(0);
  return body.errors ?? [];
}

let urlCounter = 0;
export const receiverUrl = () => `https://receiver.invalid/hooks/${++urlCounter}`;

export function messageData(type: EventType = DELIVERED, messageId: string = crypto.randomUUID()) {
  return {
    message_id: messageId,
    status: type.slice("message.".length),
    channel: "email",
    message_type: "transactional",
    recipient: "ada@example.com",
  };
}

/**
 * A POST /events body of any type. The typed client ties data to the type; the suite builds events
 * generically and the API checks each against its type.
 */
export function publishBody(
  type: EventType,
  data: object,
  extra: { resource_id?: string; occurred_at?: string } = {},
): PublishEvent {
  return { type, data, ...extra } as PublishEvent;
}

/** The API suite: every call of CONTRACT §4, its errors, and tenancy. Runs against any target. */

/** What every resource's cases share: the target (set once beforeAll has run) and request helpers. */
export function suiteContext(makeTarget: () => Promise<ApiTarget>) {
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
        body: publishBody(type, messageData(type)),
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

  return {
    /** The target; only inside a test or hook (it is made in beforeAll). */
    target: () => target,
    clientFor,
    newProject,
    send,
    createWebhook,
    publish,
    deliveriesOf,
    pendingOrAttempted,
  };
}

export type Suite = ReturnType<typeof suiteContext>;
