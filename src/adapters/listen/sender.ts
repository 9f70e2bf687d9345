import type { DeliveryRequest, Sender } from "../../app/ports/sending.ts";
import type { SendOutcome } from "../../domain/delivery.ts";
import { listenSessionKey } from "../../domain/listen-url.ts";
import { deliveryHeaders, elapsed, failureOutcome, responseOutcome } from "../delivery/outcome.ts";
import type { ListenSessions } from "./sessions.ts";

export interface ListenSenderOptions {
  /** The whole attempt's deadline (HERALD_DELIVERY_TIMEOUT), as for HTTP. */
  timeoutMs: number;
  userAgent: string;
}

/**
 * The sender the engine gets: `listen://` endpoints go to this process's listen sessions (ADR 29),
 * every other URL to the runtime's HTTP sender. A listen delivery is signed exactly as an HTTP one and
 * written, headers and body, to the session's stream; the CLI's answer is the attempt's response. No
 * stream here is a `connection_error` at once, no answer in time a `timeout`: both retried by the
 * normal schedule. Never throws for a failed attempt.
 */
export function withListenSessions(sessions: ListenSessions, http: Sender, o: ListenSenderOptions): Sender {
  const toSession = async (session: string, req: DeliveryRequest): Promise<SendOutcome> => {
    const start = performance.now();
    const headers = await deliveryHeaders(req, o.userAgent);
    const result = await sessions.deliver(session, { headers, body: req.body }, o.timeoutMs);
    if ("answer" in result) {
      return responseOutcome({
        status: result.answer.status,
        retryAfter: null,
        body: result.answer.body ?? "",
        durationMs: elapsed(start),
        now: new Date(),
      });
    }
    return failureOutcome(result.error === "timeout" ? "timeout" : "connection_error", elapsed(start));
  };
  return {
    send(req) {
      const session = listenSessionKey(req.url);
      return session === null ? http.send(req) : toSession(session, req);
    },
    async close() {
      sessions.close();
      await http.close();
    },
  };
}
