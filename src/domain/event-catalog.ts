import { z } from "zod";
import { DISABLED_REASONS, SEND_ERRORS } from "./reason-codes.ts";

/** The event types a publisher may publish, in the order of the specification's event list. */
export const PUBLISHED_EVENT_TYPES = [
  "message.accepted",
  "message.sent",
  "message.delivered",
  "message.partially_delivered",
  "message.deferred",
  "message.bounced",
  "message.failed",
  "message.rejected",
  "message.undeliverable",
  "message.expired",
  "message.cancelled",
  "message.suppressed",
  "message.opened",
  "message.clicked",
  "message.complained",
  "message.unsubscribed",
  "domain.verification_failed",
  "domain.sending_paused",
  "domain.verified",
] as const;

/**
 * Operational events: Herald emits them itself about its own endpoints and deliveries (ADR 20); an
 * endpoint subscribes to them by name like any type, but no publisher may publish them.
 */
export const OPERATIONAL_EVENT_TYPES = [
  "endpoint.disabled",
  "endpoint.failing",
  "endpoint.recovered",
  "delivery.exhausted",
] as const;

/** Every event type Herald can deliver: the published ones, then the operational ones. */
export const EVENT_TYPES = [...PUBLISHED_EVENT_TYPES, ...OPERATIONAL_EVENT_TYPES] as const;

export type EventType = (typeof EVENT_TYPES)[number];
export type PublishedEventType = (typeof PUBLISHED_EVENT_TYPES)[number];
export type OperationalEventType = (typeof OPERATIONAL_EVENT_TYPES)[number];

/** True for the types Herald emits itself (ADR 20). */
export function isOperationalType(type: string): type is OperationalEventType {
  return (OPERATIONAL_EVENT_TYPES as readonly string[]).includes(type);
}

/** Message event types that record a change of delivery status; their data.status is the type's last part. */
export const MESSAGE_LIFECYCLE_TYPES = EVENT_TYPES.filter(
  (t) =>
    t.startsWith("message.") && !["opened", "clicked", "complained", "unsubscribed"].includes(t.slice(8)),
) as EventType[];

/** Message delivery statuses: the last parts of the lifecycle event types. */
export const MESSAGE_STATUSES = [
  "accepted",
  "sent",
  "delivered",
  "partially_delivered",
  "deferred",
  "bounced",
  "failed",
  "rejected",
  "undeliverable",
  "expired",
  "cancelled",
  "suppressed",
] as const;

export const CHANNELS = ["email", "sms", "push", "webhook"] as const;
export const MESSAGE_TYPES = ["transactional", "marketing"] as const;
export const DOMAIN_STATUSES = ["verification_failed", "sending_paused", "verified"] as const;

const HOSTNAME =
  /^(?=.{1,253}$)(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/;

/**
 * Limits of free-form JSON (a message event's `metadata`): how deep it nests (the metadata object is
 * level 1), how many keys and array items it holds in all, and how long its keys and strings are. The
 * request body's 256 KiB caps the total; these keep a receiver's parser, Herald's serialiser and the
 * store away from pathological shapes (a 5,000-level nest is 30 KB).
 */
export const FREE_FORM_LIMITS = {
  maxDepth: 10,
  maxMembers: 500,
  maxKeyLength: 256,
  maxStringLength: 8192,
} as const;

/**
 * The first way a free-form JSON value breaks FREE_FORM_LIMITS: the path below the value (keys and
 * array indexes) and a message; null when it keeps them. Iterative, and it stops at the first problem,
 * so no nesting depth can exhaust the stack.
 */
export function freeFormProblem(value: unknown): { path: (string | number)[]; message: string } | null {
  const L = FREE_FORM_LIMITS;
  const stack: { value: unknown; path: (string | number)[]; depth: number }[] = [
    { value, path: [], depth: 1 },
  ];
  let members = 0;
  while (stack.length > 0) {
    const { value: v, path, depth } = stack.pop()!;
    if (typeof v === "string") {
      if (v.length > L.maxStringLength) {
        return { path, message: `must be at most ${L.maxStringLength} characters long` };
      }
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    if (depth > L.maxDepth) {
      return { path, message: `nests too deeply: metadata may nest at most ${L.maxDepth} levels` };
    }
    const entries: [string | number, unknown][] = Array.isArray(v)
      ? v.map((item, i) => [i, item])
      : Object.entries(v as Record<string, unknown>);
    members += entries.length;
    if (members > L.maxMembers) {
      return { path: [], message: `must hold at most ${L.maxMembers} keys and array items in all` };
    }
    for (const [key, item] of entries) {
      if (typeof key === "string" && key.length > L.maxKeyLength) {
        return { path, message: `has a key longer than ${L.maxKeyLength} characters` };
      }
      stack.push({ value: item, path: [...path, key], depth: depth + 1 });
    }
  }
  return null;
}

const metadata = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    const problem = freeFormProblem(value);
    if (problem) ctx.addIssue({ code: "custom", path: problem.path, message: problem.message });
  })
  .optional();
// Built once: a zod schema is costly to construct, and this one is checked on every e-mail event.
const EMAIL = z.email();

function messageData(type: EventType) {
  const part = type.slice("message.".length);
  const lifecycle = (MESSAGE_STATUSES as readonly string[]).includes(part);
  return z
    .strictObject({
      message_id: z.uuid(),
      status: lifecycle
        ? z.literal(part, { error: `must be "${part}" for ${type}` })
        : z.enum(MESSAGE_STATUSES, {
            error: `must be a message delivery status (${MESSAGE_STATUSES.join(", ")})`,
          }),
      channel: z.enum(CHANNELS),
      message_type: z.enum(MESSAGE_TYPES),
      recipient: z.string().min(1).max(320),
      reason: z.string().max(2000).optional(),
      metadata,
    })
    .superRefine((d, ctx) => {
      if (d.channel === "email" && !EMAIL.safeParse(d.recipient).success) {
        ctx.addIssue({
          code: "custom",
          path: ["recipient"],
          message: "must be an e-mail address when channel is email",
        });
      }
    });
}

function domainData(type: EventType) {
  const part = type.slice("domain.".length);
  return z.strictObject({
    domain_id: z.uuid(),
    domain: z.string().regex(HOSTNAME, { error: "must be a host name" }),
    status: z.literal(part, { error: `must be "${part}" for ${type}` }),
    grace_period_ends_at: z.iso.datetime({ offset: false }).optional(),
    reason: z.string().max(2000).optional(),
    dns_records: z
      .array(
        z.strictObject({
          type: z.string().min(1).max(16),
          name: z.string().min(1).max(253),
          value: z.string().max(4096),
          valid: z.boolean().optional(),
        }),
      )
      .max(50)
      .optional(),
  });
}

/** The endpoint an operational event is about: every operational type's data starts with these. */
function endpointFields() {
  return {
    endpoint_id: z.uuid(),
    url: z.string().min(1).max(2048),
    description: z.string().max(1024).optional(),
  };
}

const ISO = () => z.iso.datetime({ offset: false });

function operationalData(type: OperationalEventType) {
  switch (type) {
    case "endpoint.disabled":
      return z.strictObject({
        ...endpointFields(),
        disabled_reason: z.enum(DISABLED_REASONS),
        disabled_at: ISO(),
        failing_since: ISO().optional(),
      });
    case "endpoint.failing":
    case "endpoint.recovered":
      return z.strictObject({ ...endpointFields(), failing_since: ISO() });
    case "delivery.exhausted":
      return z.strictObject({
        ...endpointFields(),
        event_id: z.string().regex(/^evt_[0-9a-f]{32}$/),
        event_type: z.enum(PUBLISHED_EVENT_TYPES),
        delivery_id: z.uuid(),
        attempt: z.number().int().min(1),
        attempted_at: ISO(),
        response_status: z.number().int().min(100).max(599).optional(),
        error: z.enum(SEND_ERRORS).optional(),
      });
  }
}

/** The zod schema of data for each event type. */
export const EVENT_DATA_SCHEMAS = Object.fromEntries(
  EVENT_TYPES.map((t) => [
    t,
    isOperationalType(t) ? operationalData(t) : t.startsWith("message.") ? messageData(t) : domainData(t),
  ]),
) as unknown as Record<EventType, z.ZodType<Record<string, unknown>>>;

/** True when the string names an event type of the catalog. */
export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

/** The data field that carries the subject resource's id for an event type. */
export function resourceIdField(type: EventType): "message_id" | "domain_id" | "endpoint_id" {
  if (isOperationalType(type)) return "endpoint_id";
  return type.startsWith("message.") ? "message_id" : "domain_id";
}

/** A human description of each event type, from the specification. */
export const EVENT_DESCRIPTIONS: Record<EventType, string> = {
  "message.accepted": "The provider took the message.",
  "message.sent": "Handed off to the destination.",
  "message.delivered": "Confirmed delivered.",
  "message.partially_delivered": "Delivered to only part of the recipients.",
  "message.deferred": "Temporarily postponed; still in flight.",
  "message.bounced": "Permanently rejected by the recipient server.",
  "message.failed": "Could not be sent.",
  "message.rejected": "Could not be sent.",
  "message.undeliverable": "Accepted but could not be delivered; terminal.",
  "message.expired": "The validity window ran out before delivery.",
  "message.cancelled": "Cancelled by the client before submission.",
  "message.suppressed": "Recipient was on the suppression list; nothing was sent.",
  "message.opened": "Engagement; does not change delivery status.",
  "message.clicked": "Engagement; does not change delivery status.",
  "message.complained": "Marked as spam; to be treated as a hard signal.",
  "message.unsubscribed": "Recipient opted out; suppressed automatically from then on.",
  "domain.verification_failed":
    "A sending domain's DNS changed; it entered a grace period before sending is paused.",
  "domain.sending_paused": "A sending domain was paused after its DNS stayed out of sync.",
  "domain.verified": "A sending domain passed verification again; sending resumed.",
  "endpoint.disabled":
    "Operational, emitted by Herald: an endpoint of the project was disabled (`disabled_reason`: `gone` after a 410, `failing` after failing without success for HERALD_DISABLE_AFTER, `manual`); nothing is sent to it until it is enabled.",
  "endpoint.failing":
    "Operational, emitted by Herald: an endpoint of the project has failed without a single success for HERALD_FAILING_AFTER (1 hour by default); once per failure streak.",
  "endpoint.recovered":
    "Operational, emitted by Herald: the first success of an endpoint after a failure streak that was reported by `endpoint.failing`.",
  "delivery.exhausted":
    "Operational, emitted by Herald: the last automatic attempt of an event to an endpoint failed; Herald gives the event up for that endpoint (it can still be retried by hand).",
};
