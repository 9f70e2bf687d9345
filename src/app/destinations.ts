// The broker senders of this process, one per destination kind (ADR 27): the engine sends through
// here, endpoint changes release pooled producers here, and the stop closes them all here.
import type { SendOutcome } from "../domain/delivery.ts";
import type { DestinationKind } from "../domain/destination.ts";
import { withoutCredentials } from "../domain/destination-values.ts";
import type { Logger } from "./logger.ts";
import type { BrokerDeliveryRequest, BrokerSender } from "./ports/sending.ts";
import type { Clock } from "./ports/system.ts";

export type BrokerKind = Exclude<DestinationKind, "https">;

/** What the engine and the endpoint use cases see of the broker senders. */
export interface BrokerSenders {
  /**
   * Sends through the sender of the destination's kind. Never throws: a kind without a sender, or a
   * sender that throws, is a failed attempt (`connection_error`) with a log line; every other failed
   * attempt gets one too ("broker delivery attempt failed": kind, endpoint, event, error code).
   */
  send(request: BrokerDeliveryRequest): Promise<SendOutcome>;
  /** Closes what any sender pools for the endpoint (changed, disabled, deleted); best effort, never throws. */
  release(endpointId: string): Promise<void>;
  /** Closes every sender (after the engine drained); never throws. */
  close(): Promise<void>;
}

/** The registry over `senders`; a kind left out has none in this process. */
export function brokerSenders(
  senders: Partial<Record<BrokerKind, BrokerSender>>,
  deps: { logger: Logger; clock: Clock },
): BrokerSenders {
  const all = Object.entries(senders) as [BrokerKind, BrokerSender][];
  const failed = (startedAt: number): SendOutcome => ({
    ok: false,
    responseStatus: null,
    responseBody: null,
    error: "connection_error",
    durationMs: deps.clock.now().getTime() - startedAt,
    retryAfterMs: null,
    receipt: null,
  });
  return {
    async send(request) {
      const startedAt = deps.clock.now().getTime();
      const kind = request.destination.kind;
      const sender = senders[kind];
      if (!sender) {
        // A deployment whose build has no sender for the kind: the attempt fails and is retried later.
        deps.logger.error("no sender for this destination kind in this process", {
          kind,
          webhook_id: request.endpointId,
        });
        return failed(startedAt);
      }
      try {
        const outcome = await sender.send(request);
        // A broker's refusal (auth_error, destination_not_found, ...) is a setting its owner must fix: said
        // where operators look, as codes only. Never the broker's text or the request: they may hold credentials.
        if (!outcome.ok)
          deps.logger.warn("broker delivery attempt failed", {
            kind,
            webhook_id: request.endpointId,
            event_id: request.eventId,
            error: outcome.error,
            duration_ms: outcome.durationMs,
          });
        return outcome;
      } catch (e) {
        // The error is logged without the credentials it might quote; never the request, which holds them.
        const error = new Error(withoutCredentials(String((e as Error)?.message ?? e), request.destination));
        error.name = (e as Error)?.name ?? "Error";
        deps.logger.error("broker sender failed unexpectedly", {
          kind,
          webhook_id: request.endpointId,
          error,
        });
        return failed(startedAt);
      }
    },
    async release(endpointId) {
      await Promise.all(
        all.map(([kind, s]) =>
          s.release(endpointId).catch((e: unknown) =>
            deps.logger.warn("releasing a broker producer failed", {
              kind,
              webhook_id: endpointId,
              error: e as Error,
            }),
          ),
        ),
      );
    },
    /**
     * Closes every sender, each given at most CLOSE_WITHIN_MS: it runs after the engine's drain, inside the
     * stop's grace, and a broker that does not answer (a producer still connecting to a host that never
     * answers) must not hold the process past it. What a sender leaves open then goes with the process.
     */
    async close() {
      await Promise.all(
        all.map(async ([kind, s]) => {
          let timer: ReturnType<typeof setTimeout> | undefined;
          const late = new Promise<"late">((resolve) => {
            timer = setTimeout(() => resolve("late"), CLOSE_WITHIN_MS);
          });
          const closed = s.close().then(
            () => "closed" as const,
            (e: unknown) => {
              deps.logger.warn("closing a broker sender failed", { kind, error: e as Error });
              return "closed" as const;
            },
          );
          if ((await Promise.race([closed, late])) === "late")
            deps.logger.warn("a broker sender did not close in time; leaving it to the process's end", {
              kind,
              within_ms: CLOSE_WITHIN_MS,
            });
          clearTimeout(timer);
        }),
      );
    },
  };
}

/** How long a stop waits for one kind's producers and connections to close. */
export const CLOSE_WITHIN_MS = 2_000;
