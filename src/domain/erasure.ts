import type { Envelope } from "./envelope.ts";
import { invalid } from "./errors.ts";
import { UUID_PATTERN } from "./ids.ts";
import { formatDuration, parseDuration } from "./time.ts";

/** Who an erasure is about: the subject resource of the envelopes, or the recipient in their data. */
export type ErasureSubject =
  | { kind: "resource_id"; resourceId: string }
  | { kind: "recipient"; recipient: string };

/** Longest recipient an event may carry (the catalog's limit), so longer ones cannot match anything. */
export const RECIPIENT_MAX_LENGTH = 320;

/**
 * A resource id as stored for matching: lowercase, so an id published in capitals is found by the
 * same id written in lowercase (a UUID's case carries no meaning).
 */
export function normalizeResourceId(id: string): string {
  return id.trim().toLowerCase();
}

/**
 * A recipient as it is matched: trimmed and lowercased. E-mail domains are case-insensitive and
 * providers treat local parts so too; erasing a differently-cased address as well errs on the side of
 * erasing.
 */
export function normalizeRecipient(recipient: string): string {
  return recipient.trim().toLowerCase();
}

/** What an envelope is about, for erasure: its resource id and, for message events, its recipient. */
export function subjectsOf(envelope: Pick<Envelope, "resource_id" | "data">): {
  resourceId: string;
  recipient: string | null;
} {
  const recipient = envelope.data.recipient;
  return {
    resourceId: normalizeResourceId(String(envelope.resource_id ?? "")),
    recipient:
      typeof recipient === "string" && recipient.trim() !== "" ? normalizeRecipient(recipient) : null,
  };
}

/** Checks an erasure request: exactly one of resource_id (a UUID) and recipient (non-empty). */
export function erasureSubject(input: {
  resourceId?: string | undefined;
  recipient?: string | undefined;
}): ErasureSubject {
  const { resourceId, recipient } = input;
  if (resourceId !== undefined && recipient !== undefined) {
    throw invalid([
      {
        path: "recipient",
        message: "cannot be given together with resource_id: erase one subject at a time",
      },
    ]);
  }
  if (resourceId !== undefined) {
    if (!UUID_PATTERN.test(resourceId.trim())) {
      throw invalid([{ path: "resource_id", message: "must be a UUID (an event's resource_id)" }]);
    }
    return { kind: "resource_id", resourceId: normalizeResourceId(resourceId) };
  }
  if (recipient !== undefined) {
    if (recipient.trim() === "" || recipient.length > RECIPIENT_MAX_LENGTH) {
      throw invalid([
        {
          path: "recipient",
          message: `must be 1 to ${RECIPIENT_MAX_LENGTH} characters (an event's data.recipient)`,
        },
      ]);
    }
    return { kind: "recipient", recipient: normalizeRecipient(recipient) };
  }
  throw invalid([{ path: "resource_id", message: "or recipient is required: say whose events to erase" }]);
}

/** Shortest retention a project may choose: the same floor as HERALD_RETENTION. */
export const MIN_RETENTION_MS = 60_000;

/**
 * Checks a project's retention, written like HERALD_RETENTION (`7d`, `36h`), against the server's:
 * at least a minute and never longer. Answers milliseconds.
 */
export function projectRetention(text: string, maxMs: number): number {
  const ms = parseDuration(text);
  if (ms === null || ms < MIN_RETENTION_MS) {
    throw invalid([
      {
        path: "retention",
        message: `must be a duration like 12h, 7d or 30d, of at least ${formatDuration(MIN_RETENTION_MS)} (got "${text}")`,
      },
    ]);
  }
  if (ms > maxMs) {
    throw invalid([
      {
        path: "retention",
        message: `must be at most ${formatDuration(maxMs)}, the server's HERALD_RETENTION (got "${text}")`,
      },
    ]);
  }
  return ms;
}
