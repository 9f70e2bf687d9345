import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.d.ts";

/** The typed Herald client: `client.GET("/api/v1/webhooks")`, paths and bodies checked against the OpenAPI document. */
export type HeraldClient = Client<paths>;

/** A registered endpoint, as the API returns it (no secret). */
export type Webhook = components["schemas"]["Webhook"];
/** An endpoint together with the secret just issued (creation, rotation). */
export type WebhookWithSecret = components["schemas"]["WebhookWithSecret"];
/** How an endpoint's deliveries are signed: `herald-v1` or `standard-webhooks`. */
export type SignatureScheme = components["schemas"]["Webhook"]["signature_scheme"];
/** One delivery attempt. */
export type Delivery = components["schemas"]["Delivery"];
/** An event envelope, as posted to endpoints: a union discriminated by `type`, each with its own `data`. */
export type HeraldEvent = components["schemas"]["Event"];
/** The envelope of one event type: `EventOf<"message.delivered">["data"]["status"]` is `"delivered"`. */
export type EventOf<T extends EventType> = Extract<HeraldEvent, { type: T }>;
/** The `data` of one event type. */
export type EventData<T extends EventType> = EventOf<T>["data"];
/** The body of `POST /events`: a type and the data it defines (a union discriminated by `type`). */
export type PublishEvent = components["schemas"]["PublishEventRequest"];
/** The answer to publishing an event: the envelope plus how many endpoints it was fanned out to. */
export type PublishedEvent = components["schemas"]["PublishedEvent"];
/** One event of a batch publish: what `POST /events` takes, plus its own optional `idempotency_key`. */
export type PublishBatchEvent = components["schemas"]["PublishBatchEvent"];
/** The answer to a batch publish (`POST /events/batch`): one result per event, in the order sent. */
export type PublishBatchResult = components["schemas"]["PublishBatchResult"];
/** One event's result in a batch: published (`status: 202`, `event`) or not (`status`, `problem`). */
export type BatchEventResult = PublishBatchResult["data"][number];
/** A batch event that was stored, or replayed for its idempotency key. */
export type BatchPublished = components["schemas"]["BatchPublished"];
/** A batch event that was not stored, with the problem `POST /events` would have answered. */
export type BatchFailed = components["schemas"]["BatchFailed"];

/** Most events one `POST /events/batch` may hold. */
export const MAX_BATCH_EVENTS = 100;

/** True when a batch event was stored (or replayed); narrows the result to `BatchPublished`. */
export function isPublished(result: BatchEventResult): result is BatchPublished {
  return result.status === 202 && "event" in result;
}

/** A test event and its first delivery record (`POST /webhooks/{id}/test`). */
export type TestDelivery = components["schemas"]["TestDelivery"];
/** How many deliveries a recovery queued, and the window it applied (`POST /webhooks/{id}/recover`). */
export type Recovery = components["schemas"]["Recovery"];
/** A payload filter: a MongoDB-style query over the envelope (`type`, `resource_id`, `occurred_at`, `data.*`). */
export type EventFilter = components["schemas"]["EventFilter"];
/** Whether an endpoint would get a delivery for an event, and why not (`POST /webhooks/{id}/filter-test`). */
export type FilterTestResult = components["schemas"]["FilterTestResult"];
/** One erasure and what it removed (`POST /erasures`). */
export type Erasure = components["schemas"]["Erasure"];
/** The project's settings (`GET /settings`): its own retention, and what applies. */
export type Settings = components["schemas"]["Settings"];
/** An event type of the catalog. */
export type EventType = components["schemas"]["EventType"];
/** An RFC 9457 problem document, as every error is answered. */
export type Problem = components["schemas"]["Problem"];
/** One invalid field of a 422 answer. */
export type ValidationIssue = components["schemas"]["ValidationIssue"];

/** Options of `createHeraldClient`. */
export interface HeraldClientOptions {
  /** Where Herald listens, e.g. `http://localhost:8080` (without `/api/v1`). */
  baseUrl: string;
  /** An API token (`hrld_...`); sent as `Authorization: Bearer <token>`. Omit for health calls. */
  token?: string | undefined;
  /** A fetch to use instead of the global one (tests pass `(req) => app.fetch(req)`). */
  fetch?: ((request: Request) => Promise<Response>) | undefined;
}

/** Creates a typed client for the Herald API. */
export function createHeraldClient(options: HeraldClientOptions): HeraldClient {
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers: options.token ? { Authorization: `Bearer ${options.token}` } : {},
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** An error answer of the Herald API, with the fields of its problem document. */
export class HeraldApiError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The stable machine code (`not_found`, `validation_failed`, ...); `unknown` when the body was not a problem. */
  readonly code: string;
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  /** The invalid fields of a 422; empty otherwise. */
  readonly errors: ValidationIssue[];
  /** The request id to quote when reporting a problem. */
  readonly requestId: string | null;
  /** The parsed (or raw text) body as received. */
  readonly body: unknown;

  constructor(status: number, body: unknown) {
    const p = (typeof body === "object" && body !== null ? body : {}) as Partial<Problem> & {
      errors?: ValidationIssue[];
    };
    const detail = typeof p.detail === "string" ? p.detail : `HTTP ${status}`;
    super(`${status} ${p.code ?? "unknown"}: ${detail}`);
    this.name = "HeraldApiError";
    this.status = status;
    this.code = typeof p.code === "string" ? p.code : "unknown";
    this.type = typeof p.type === "string" ? p.type : "about:blank";
    this.title = typeof p.title === "string" ? p.title : "";
    this.detail = detail;
    this.errors = Array.isArray(p.errors) ? p.errors : [];
    this.requestId = typeof p.request_id === "string" ? p.request_id : null;
    this.body = body;
  }
}

/** The result of an openapi-fetch call: data on success, error otherwise. */
export interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** Awaits a client call and returns its data; throws `HeraldApiError` for any non-2xx answer. */
export async function unwrap<T>(call: Promise<FetchResult<T>> | FetchResult<T>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new HeraldApiError(response.status, error);
  return data as T;
}

/** One page of a Herald list. */
export interface ListPage<T> {
  data: T[];
  next_cursor: string | null;
}

/**
 * Walks every item of a list, page after page, following `next_cursor`.
 * `fetchPage` gets the cursor (undefined for the first page), e.g.
 * `paginate((cursor) => unwrap(client.GET("/api/v1/webhooks", { params: { query: { cursor } } })))`.
 */
export async function* paginate<T>(
  fetchPage: (cursor: string | undefined) => Promise<ListPage<T>>,
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    yield* page.data;
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
}
