import { Webhook } from "standardwebhooks";
import type { Resolve } from "../../src/adapters/delivery/guarded-lookup.ts";
import type { BrokerDeliveryRequest } from "../../src/app/ports/sending.ts";
import type { BrokerDestination, SqsDestination } from "../../src/domain/destination.ts";
import type { SignatureScheme } from "../../src/domain/signature-scheme.ts";
import { verifySignature } from "../../src/domain/signing.ts";

// Shared by the broker sender tests: a delivery request as the engine builds one, and the consumer-side
// verification a customer would write (Herald's own verify for herald-v1, the Standard Webhooks library
// for its schemes), so a message is checked by signature as well as byte for byte.

export const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8MVDX+wqmh8=";

let counter = 0;

/** A delivery of a small envelope with non-ASCII text to `destination`, signed now with SECRET. */
export function brokerRequest(
  destination: BrokerDestination,
  over: Partial<BrokerDeliveryRequest> = {},
): BrokerDeliveryRequest {
  const eventId = over.eventId ?? `evt_${Date.now().toString(36)}_${++counter}`;
  return {
    endpointId: "ep_test",
    version: 1,
    destination,
    body: JSON.stringify({ id: eventId, type: "order.paid", data: { name: "Zoë ✓", n: counter } }),
    eventId,
    secrets: [SECRET],
    timestamp: Math.floor(Date.now() / 1000),
    scheme: "herald-v1",
    headers: [["X-Tenant", "acme"]],
    messageKey: "order_1",
    deduplicationId: eventId,
    ...over,
  };
}

/** An SQS destination of `queueUrl` on the server whose scripts/sqs.sh exports are `env`. */
export const sqsDestination = (
  env: Record<string, string>,
  queueUrl: string,
  over: Partial<SqsDestination> = {},
): SqsDestination => ({
  kind: "sqs",
  queueUrl,
  region: env.SQS_REGION ?? "us-east-1",
  accessKeyId: env.AWS_ACCESS_KEY_ID ?? "",
  secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? "",
  sessionToken: null,
  endpointUrl: env.SQS_ENDPOINT ?? null,
  key: "resource",
  ...over,
});

export /** Maps test host names to addresses, as DNS would (a name not in it does not exist), noting each asked. */
function names(table: Record<string, string>): Resolve & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (host: string) => {
    asked.push(host);
    const address = table[host];
    if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return [{ address, family: 4 }];
  };
  return Object.assign(resolve, { asked });
}

/** Whether `headers` (as a consumer rebuilt them) carry a valid signature of `body` under `scheme`. */
export async function verifies(
  scheme: SignatureScheme,
  body: string,
  headers: Record<string, string>,
  secret = SECRET,
): Promise<boolean> {
  if (scheme === "herald-v1") {
    const verdict = await verifySignature({
      body,
      timestamp: headers["X-Webhook-Timestamp"],
      signature: headers["X-Webhook-Signature"],
      secrets: [secret],
      nowSeconds: Math.floor(Date.now() / 1000),
    });
    return verdict.ok;
  }
  try {
    new Webhook(secret).verify(body, headers);
    return true;
  } catch {
    return false;
  }
}
