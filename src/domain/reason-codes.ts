// Codes that the records and the event catalog both name: why a send failed (a delivery's `error`, an
// attempt event's) and why an endpoint is disabled. Here, importing nothing, so the catalog can describe
// them without importing the types it describes (delivery.ts, endpoint.ts import the catalog).

/** Why a send failed, as the sender reports it. */
export const SEND_ERRORS = [
  "timeout",
  "connection_error",
  "dns_error",
  "tls_error",
  "blocked_address",
  "http_status",
  "redirect",
  // Broker destinations (ADR 27).
  "auth_error",
  "destination_not_found",
  "unroutable",
  "broker_rejected",
  "message_too_large",
] as const;
export type SendError = (typeof SEND_ERRORS)[number];

export const DISABLED_REASONS = ["manual", "failing", "gone"] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];
