import type { IncomingMessage, ServerResponse } from "node:http";
import { verifyWebhook, WebhookVerificationError } from "../../clients/typescript/verify.ts";
import { milliseconds } from "./format.ts";
import type { Io } from "./io.ts";
import { type ForwardResult, forward, type HeaderPairs, rawHeaderPairs } from "./listen-forward.ts";

/** What `herald listen` reports for one delivery (and prints as one JSON line with --json). */
export interface ListenRecord {
  received_at: string;
  /** true: a secret's signature matched; false: verification failed; null: no secret to check with. */
  verified: boolean | null;
  /** The verification error code when verification failed. */
  reason: string | null;
  event_type: string | null;
  event_id: string | null;
  /** Receipt time minus X-Webhook-Timestamp (whole seconds, so up to 1 s high). */
  latency_ms: number | null;
  /** Receipt time minus the event's occurred_at: how long the event took to arrive, retries included. */
  age_ms: number | null;
  /** The status herald listen answered with. */
  answered: number;
  forward: ForwardResult | null;
  /** The body as parsed JSON, when it is JSON. */
  event: unknown;
}

function clock(d: Date): string {
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}

/** One human line per delivery: time, verdict, event type, event id, latency, age, forward result. */
export function formatRecord(r: ListenRecord): string {
  const verdict =
    r.verified === true ? "✔ verified" : r.verified === false ? `✘ ${r.reason}` : "? unverified (no secret)";
  const parts = [
    clock(new Date(r.received_at)),
    verdict.padEnd(28),
    (r.event_type ?? "-").padEnd(28),
    r.event_id ?? "-",
  ];
  parts.push(`latency ${milliseconds(r.latency_ms)}`, `age ${milliseconds(r.age_ms)}`);
  if (r.answered !== 200) parts.push(`answered ${r.answered}`);
  if (r.forward) parts.push(`→ ${r.forward.status ?? `failed (${r.forward.error})`} from ${r.forward.url}`);
  return parts.join("  ");
}

async function readBody(req: IncomingMessage): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

function parseJson(body: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(body).toString("utf8"));
  } catch {
    return null;
  }
}

function field(value: unknown, name: string): string | null {
  if (typeof value !== "object" || value === null) return null;
  const v = (value as Record<string, unknown>)[name];
  return typeof v === "string" ? v : null;
}
/** How `herald listen` treats each delivery, from its options. */
export interface ListenOptions {
  secrets: string[];
  forwardUrl: string | null;
  rejectInvalid: boolean;
  json: boolean;
  toleranceSeconds: number;
}

/**
 * Verifies and prints one delivery (forwarding it when asked) and says what to answer: the record's
 * `answered`. Shared by the local receiver and the listen session (ADR 29).
 */
export async function receiveDelivery(
  pairs: HeaderPairs,
  body: Uint8Array<ArrayBuffer>,
  io: Io,
  o: ListenOptions,
): Promise<ListenRecord> {
  const received = new Date();
  const header = (name: string) => pairs.find(([n]) => n.toLowerCase() === name)?.[1];
  let verified: boolean | null = null;
  let reason: string | null = null;
  if (o.secrets.length > 0) {
    try {
      await verifyWebhook({
        body,
        headers: new Headers(pairs as [string, string][]),
        secrets: o.secrets,
        toleranceSeconds: o.toleranceSeconds,
        now: received,
      });
      verified = true;
    } catch (e) {
      verified = false;
      reason = e instanceof WebhookVerificationError ? e.code : (e as Error).message;
    }
  }
  const event = parseJson(body);
  const timestamp = header("x-webhook-timestamp");
  const occurredAt = Date.parse(field(event, "occurred_at") ?? "");
  const rejected = o.rejectInvalid && verified === false;
  const record: ListenRecord = {
    received_at: received.toISOString(),
    verified,
    reason,
    event_type: field(event, "type"),
    event_id: field(event, "id") ?? header("x-webhook-id") ?? null,
    latency_ms:
      typeof timestamp === "string" && /^\d{1,12}$/.test(timestamp.trim())
        ? received.getTime() - Number(timestamp) * 1000
        : null,
    age_ms: Number.isNaN(occurredAt) ? null : received.getTime() - occurredAt,
    answered: rejected ? 400 : 200,
    forward: o.forwardUrl && !rejected ? await forward(o.forwardUrl, pairs, body) : null,
    event,
  };
  io.out(o.json ? JSON.stringify(record) : formatRecord(record));
  return record;
}

/** Verifies, prints and answers one request (forwarding it when asked); GET and HEAD say what this is. */
export async function handleDelivery(
  req: IncomingMessage,
  res: ServerResponse,
  io: Io,
  o: ListenOptions,
): Promise<void> {
  if (req.method !== "POST") {
    res.writeHead(req.method === "GET" || req.method === "HEAD" ? 200 : 405, {
      "Content-Type": "text/plain; charset=utf-8",
      Allow: "GET, HEAD, POST",
    });
    res.end("herald listen: POST webhook deliveries here.\n");
    return;
  }
  const body = await readBody(req);
  const record = await receiveDelivery(rawHeaderPairs(req.rawHeaders), body, io, o);
  res.writeHead(record.answered, { "Content-Type": "text/plain; charset=utf-8" });
  res.end(record.answered === 400 ? `${record.reason}\n` : "ok\n");
}
