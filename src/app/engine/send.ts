import { unixSeconds } from "../../domain/time.ts";
import type { Logger } from "../logger.ts";
import type { Sender } from "../ports/sending.ts";
import type { Clock } from "../ports/system.ts";
import type { Prepared, Sent } from "./work.ts";

/**
 * Stage 4, send: one signed POST, its attempt starting at `attemptedAt` (the pace stage's moment), with
 * the attempt's `traceparent` when it is traced; a sender that throws counts as a connection error.
 * Never throws.
 */
export async function sendPrepared(
  p: Prepared,
  deps: { sender: Sender; clock: Clock; logger: Logger },
  attemptedAt: Date = deps.clock.now(),
  traceparent?: string,
): Promise<Sent> {
  try {
    const outcome = await deps.sender.send({
      url: p.endpoint.url,
      body: p.event.body,
      eventId: p.event.id,
      secrets: p.secrets,
      timestamp: unixSeconds(attemptedAt),
      scheme: p.endpoint.signatureScheme,
      headers: p.headers,
      traceparent,
      clientCertificate: p.clientCertificate,
    });
    // Built field by field: one fixed shape on the hot path.
    return {
      delivery: p.delivery,
      event: p.event,
      endpoint: p.endpoint,
      secrets: p.secrets,
      headers: p.headers,
      clientCertificate: p.clientCertificate,
      attemptedAt,
      outcome,
    };
  } catch (e) {
    deps.logger.error("sender failed unexpectedly", { error: e as Error, delivery_id: p.delivery.id });
    return {
      ...p,
      attemptedAt,
      outcome: {
        ok: false,
        responseStatus: null,
        responseBody: null,
        error: "connection_error",
        durationMs: deps.clock.now().getTime() - attemptedAt.getTime(),
        retryAfterMs: null,
      },
    };
  }
}
