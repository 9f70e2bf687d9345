import { randomUUID } from "node:crypto";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { expect } from "vitest";
import type { WebhookWithSecret } from "../../clients/typescript/client.ts";
import { verifyWebhook } from "../../clients/typescript/verify.ts";
import type { Consumed } from "./consumed.ts";

// What the whole-system destination files (test/e2e/destinations-*.test.ts) share: publishing events of
// chosen resources, verifying what a consumer read as any receiver would (Herald's clients/ verifier and,
// for standard-webhooks, the specification's own library), and searching Herald's answers for credentials.

/** Publishes a message.delivered event about `resource` (its resource_id) and answers the event id. */
export async function publishAbout(baseUrl: string, token: string, resource: string): Promise<string> {
  const r = await fetch(`${baseUrl}/api/v1/events`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      "idempotency-key": randomUUID(),
    },
    body: JSON.stringify({
      type: "message.delivered",
      data: {
        message_id: resource,
        status: "delivered",
        channel: "email",
        message_type: "transactional",
        recipient: "user@example.com",
      },
    }),
    signal: AbortSignal.timeout(30_000),
  });
  const json = (await r.json()) as { id?: string };
  if (r.status !== 202 || !json.id) throw new Error(`publish answered ${r.status}: ${JSON.stringify(json)}`);
  return json.id;
}

/**
 * Verifies a consumed message with the endpoint's key, as a consumer that may lag would (an hour's
 * tolerance), and answers the envelope; for standard-webhooks, the npm `standardwebhooks` library must
 * accept it too. The header carrying the event id must match the envelope's id.
 */
export async function verifyConsumed(c: Consumed, endpoint: WebhookWithSecret): Promise<{ id: string }> {
  const scheme = endpoint.signature_scheme;
  const envelope = await verifyWebhook({
    body: c.body,
    headers: c.headers,
    scheme,
    toleranceSeconds: 3_600,
    ...(scheme === "standard-webhooks-ed25519"
      ? { publicKeys: endpoint.public_key ?? "" }
      : { secrets: endpoint.secret ?? "" }),
  });
  if (scheme === "standard-webhooks") {
    const again = new StandardWebhook(endpoint.secret ?? "").verify(c.body, c.headers) as { id: string };
    expect(again.id).toBe(envelope.id);
  }
  expect(c.headers[scheme === "herald-v1" ? "X-Webhook-Id" : "webhook-id"]).toBe(envelope.id);
  return envelope;
}

/** The event id a consumed message's envelope names (read from the body; verifyConsumed checks it). */
export const eventOf = (c: Consumed): string => (JSON.parse(c.body) as { id: string }).id;

/** A list with consecutive repeats collapsed: an at-least-once stream's redeliveries of one message. */
export function collapsed<T>(xs: readonly T[]): T[] {
  return xs.filter((x, i) => i === 0 || xs[i - 1] !== x);
}

/** GETs `path` of the API and answers the raw text of the answer (200 expected). */
async function getText(baseUrl: string, token: string, path: string): Promise<string> {
  const r = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}: ${text}`);
  return text;
}

/**
 * Every answer the API gives about `webhookIds`, as raw text: each endpoint, the endpoint list, every
 * page of each endpoint's deliveries and each delivery by id.
 */
export async function everyAnswer(baseUrl: string, token: string, webhookIds: string[]): Promise<string[]> {
  const out = [await getText(baseUrl, token, "/api/v1/webhooks?limit=100")];
  for (const id of webhookIds) {
    out.push(await getText(baseUrl, token, `/api/v1/webhooks/${id}`));
    let cursor: string | null = null;
    do {
      const q = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
      const page = await getText(baseUrl, token, `/api/v1/webhooks/${id}/deliveries?limit=100${q}`);
      out.push(page);
      const parsed = JSON.parse(page) as { data: { id: string }[]; next_cursor: string | null };
      for (const d of parsed.data)
        out.push(await getText(baseUrl, token, `/api/v1/webhooks/deliveries/${d.id}`));
      cursor = parsed.next_cursor;
    } while (cursor);
  }
  return out;
}

/** Fails naming where any of `credentials` (or its base64 or URL-encoded form) appears in `texts`. */
export function expectNoCredential(texts: Record<string, string[]>, credentials: string[]): void {
  const forms = credentials.flatMap((c) => [c, Buffer.from(c).toString("base64"), encodeURIComponent(c)]);
  for (const [where, list] of Object.entries(texts)) {
    for (const text of list) {
      for (const form of forms) {
        if (text.includes(form))
          throw new Error(`a credential appears in ${where}: …${excerpt(text, form)}…`);
      }
    }
  }
}

function excerpt(text: string, form: string): string {
  const at = text.indexOf(form);
  return text.slice(Math.max(0, at - 80), at + form.length + 20);
}
