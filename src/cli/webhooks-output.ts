import type { Webhook } from "../../clients/typescript/client.ts";
import { printFields, timeWithAge } from "./format.ts";
import type { Io } from "./io.ts";
import { destinationLines } from "./webhooks-destination.ts";

/** `5/s`, `300/m`, or `none`. */
export function rateLimitLabel(limit: Webhook["rate_limit"]): string {
  if (!limit) return "none";
  return limit.per_second !== undefined ? `${limit.per_second}/s` : `${limit.per_minute}/m`;
}

/** `enabled`, or `disabled (failing)`. */
export function endpointState(w: Pick<Webhook, "enabled" | "disabled_reason">): string {
  return w.enabled ? "enabled" : `disabled (${w.disabled_reason ?? "manual"})`;
}

/** An endpoint for people: every setting, header values masked, never a secret. */
export function printWebhook(io: Io, w: Webhook): void {
  printFields(io, [
    ["id", w.id],
    ["kind", w.kind],
    ["url", w.url],
    ...destinationLines(w),
    ["events", w.events],
    ["state", endpointState(w)],
    ["rate limit", rateLimitLabel(w.rate_limit)],
    ["ordering", w.ordering === "fifo" ? `fifo (${w.held} held)` : "none"],
    ["description", w.description],
    ["signature scheme", w.signature_scheme],
    ...(w.public_key === null ? [] : [["public key", w.public_key] as [string, unknown]]),
    [
      "headers",
      Object.keys(w.headers).length ? Object.entries(w.headers).map(([n, mask]) => `${n}: ${mask}`) : null,
    ],
    ["filter", w.filter === null ? "none (every event)" : JSON.stringify(w.filter)],
    ["client certificate", clientCertificateLines(w.client_certificate)],
    ["created", timeWithAge(w.created_at)],
    ["updated", timeWithAge(w.updated_at)],
  ]);
}

/** A client certificate's facts for people: subject, issuer, validity, fingerprint; never the key. */
function clientCertificateLines(c: Webhook["client_certificate"]): string {
  if (c === null) return "none";
  const expired = Date.parse(c.not_after) <= Date.now() ? " (EXPIRED)" : "";
  return `${c.subject}; issued by ${c.issuer}; valid until ${c.not_after}${expired}; sha256 ${c.fingerprint_sha256}`;
}

/** What a creation, rotation or change of key kind issued: a secret (shown once) or, for Ed25519, the public key. */
export function printSecret(io: Io, secret: string, w: Pick<Webhook, "public_key">): void {
  if (w.public_key !== null) {
    io.out(
      `\nPublic key (receivers verify v1a signatures with it; webhooks get shows it again):\n  ${secret}\n`,
    );
    return;
  }
  io.out(`\nSigning secret:\n  ${secret}\n`);
  io.out(
    "⚠ This secret will not be shown again. Store it now (e.g. HERALD_WEBHOOK_SECRET for npx herald listen).",
  );
}
