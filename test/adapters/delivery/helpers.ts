import type { LookupAddress } from "node:dns";
import { createServer } from "node:net";
import { Webhook } from "standardwebhooks";
import type { Resolve } from "../../../src/adapters/delivery/guarded-lookup.ts";
import type { DeliveryRequest } from "../../../src/app/ports/sending.ts";
import { type BehaviourFn, behaviours, type ReceivedRequest } from "../../support/receiver.ts";

export const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8MVDX+wqmh8=";
export const OLD_SECRET = "whsec_3uHkNyUKLn0C7yxBbKZtd6C8TUsTnW7rbQLmNrZX1yM=";

/** A delivery of a small envelope with non-ASCII text, signed now with SECRET. */
export function delivery(url: string, overrides: Partial<DeliveryRequest> = {}): DeliveryRequest {
  return {
    url,
    body: JSON.stringify({ id: "evt_1", type: "message.delivered", data: { note: "héllo ✓ 🚀" } }),
    eventId: "evt_1",
    secrets: [SECRET],
    timestamp: Math.floor(Date.now() / 1000),
    scheme: "herald-v1",
    headers: [],
    ...overrides,
  };
}

/** A fake resolver answering one list per call (the last repeats) and recording the names asked. */
export function scriptedLookup(...answers: string[][]): Resolve & { calls: string[] } {
  const calls: string[] = [];
  const fn = async (hostname: string): Promise<LookupAddress[]> => {
    calls.push(hostname);
    const answer = answers[Math.min(calls.length - 1, answers.length - 1)] ?? [];
    return answer.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(fn, { calls });
}

/** A resolver failing the way getaddrinfo does, with the given code (ENOTFOUND, EAI_AGAIN, ...). */
export function failingLookup(code: string): Resolve {
  return async (hostname) => {
    throw Object.assign(new Error(`getaddrinfo ${code} ${hostname}`), { code, hostname });
  };
}

/** A loopback port nothing listens on: bind one, note it, close it. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Verifies a received request with the Standard Webhooks specification's own library (standardwebhooks
 * on npm), not Herald's code: "ok", or the library's reason.
 */
export function standardWebhooksVerdict(
  req: Pick<ReceivedRequest, "headers" | "body">,
  secret: string,
): "ok" | string {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k] = v;
  try {
    new Webhook(secret).verify(req.body.toString("utf8"), headers);
    return "ok";
  } catch (e) {
    return (e as Error).message;
  }
}

/** A receiver behaviour: 200 when the Standard Webhooks library verifies the request with `secret`, else 401. */
export function verifyStandardWebhooks(secret: string): BehaviourFn {
  return (req) => {
    const verdict = standardWebhooksVerdict(req, secret);
    return verdict === "ok" ? behaviours.status(200, "ok") : behaviours.status(401, verdict);
  };
}
