// The fields of an endpoint's settings, shared by the requests that set them (create, update) and the
// answers that show them: each with its limits and its text in the OpenAPI document.
import { z } from "@hono/zod-openapi";
import {
  MAX_CERTIFICATE_PEM_LENGTH,
  MAX_PASSPHRASE_LENGTH,
  MAX_PRIVATE_KEY_PEM_LENGTH,
} from "../../../../domain/client-certificate.ts";
import {
  HEADER_VALUE_MASK,
  MAX_CUSTOM_HEADERS,
  MAX_CUSTOM_HEADERS_SIZE,
  MAX_HEADER_NAME_LENGTH,
  MAX_HEADER_VALUE_LENGTH,
} from "../../../../domain/custom-headers.ts";
import { ORDERINGS } from "../../../../domain/endpoint.ts";
import { MAX_URL_LENGTH } from "../../../../domain/endpoint-url.ts";
import { RATE_LIMIT_MAX } from "../../../../domain/rate-limit.ts";
import { SIGNATURE_SCHEMES } from "../../../../domain/signature-scheme.ts";
import { EventTypeSchema, intRange, timestamp } from "../shared.ts";

export const url = z.string().max(MAX_URL_LENGTH).openapi({
  format: "uri",
  example: "https://example.com/webhooks/herald",
  description: "Absolute https:// URL, at most 2048 characters, without user or password.",
});

export const events = z
  .array(EventTypeSchema)
  .min(1, { error: "must list at least one event type" })
  .superRefine((types, ctx) => {
    const seen = new Set<string>();
    types.forEach((t, i) => {
      if (seen.has(t)) ctx.addIssue({ code: "custom", path: [i], message: `duplicate event type "${t}"` });
      seen.add(t);
    });
  })
  // The example subscribes to the type the test-event example sends, so the two examples work together.
  .openapi({
    uniqueItems: true,
    description: "Event types to receive; no duplicates.",
    example: ["message.delivered", "message.bounced"],
  });

export const description = z.string().max(1024).nullable().openapi({ example: "Order service" });

// The rules themselves are the domain's (custom-headers.ts), checked by the use case so every issue
// names its header; the schema states them for the OpenAPI document.
const headerNames = {
  maxProperties: MAX_CUSTOM_HEADERS,
  propertyNames: { pattern: "^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$", maxLength: MAX_HEADER_NAME_LENGTH },
};
const headerValue = z.string().openapi({
  minLength: 1,
  maxLength: MAX_HEADER_VALUE_LENGTH,
  pattern: "^[\\x21-\\x7e]([\\x20-\\x7e\\t]*[\\x21-\\x7e])?$",
});
const headersRule = `At most ${MAX_CUSTOM_HEADERS} headers and ${MAX_CUSTOM_HEADERS_SIZE} characters of names and values in all. Names are RFC 7230 tokens of at most ${MAX_HEADER_NAME_LENGTH} characters, unique without regard to case; X-Webhook-*, webhook-*, Proxy-*, User-Agent, Content-Type, Content-Length, Content-Encoding, Host, Expect, traceparent, tracestate and the hop-by-hop headers (Connection, Keep-Alive, Transfer-Encoding, TE, Trailer, Upgrade) are refused. Values are printable ASCII, 1-${MAX_HEADER_VALUE_LENGTH} characters, without a space at either end. Values are encrypted at rest and every answer shows them as ${HEADER_VALUE_MASK}.`;

/**
 * A JSON object parsed from a body can hold an own `__proto__` key, which a zod record drops without a
 * word; a header of that name is refused instead, so nothing a caller sent is silently ignored.
 */
function refuseProtoKey<T extends z.ZodType>(schema: T) {
  return z.preprocess((value, ctx) => {
    if (value !== null && typeof value === "object" && Object.hasOwn(value, "__proto__")) {
      ctx.issues.push({
        code: "custom",
        path: ["__proto__"],
        message: "is not a header name Herald can keep",
        input: value,
      });
    }
    return value;
  }, schema);
}

export const createHeaders = refuseProtoKey(z.record(z.string(), headerValue)).openapi({
  ...headerNames,
  example: { Authorization: "Bearer receiver-api-key" },
  description: `Custom headers sent with every delivery to this endpoint (an API key, a routing hint). ${headersRule}`,
});

export const changeHeaders = refuseProtoKey(z.record(z.string(), headerValue.nullable()).nullable()).openapi({
  ...headerNames,
  example: { Authorization: "Bearer new-receiver-api-key", "X-Old-Route": null },
  description: `A JSON merge patch (RFC 7396) of the custom headers: a value sets a header (replacing one of the same name in any case), null removes one, headers not named stay; \`null\` removes them all. ${headersRule}`,
});

export const signatureScheme = z.enum(SIGNATURE_SCHEMES).openapi({
  description:
    "How deliveries are signed. `herald-v1`: X-Webhook-Id, X-Webhook-Timestamp and X-Webhook-Signature (`v1=` + hex HMAC-SHA256 of `<timestamp>.<body>`, keyed with the whole `whsec_` string). `standard-webhooks`: webhook-id, webhook-timestamp and webhook-signature (`v1,` + base64 HMAC-SHA256 of `<id>.<timestamp>.<body>`, keyed with the base64-decoded part after `whsec_`), as the Standard Webhooks specification defines them. Same secret for both. `standard-webhooks-ed25519`: the same headers with `v1a,` + base64 Ed25519 signature of `<id>.<timestamp>.<body>` (the specification's asymmetric signature); receivers verify with the endpoint's `public_key` and hold no secret. Two signatures during a rotation grace period, in every scheme. Switching between an HMAC scheme and `standard-webhooks-ed25519` issues a key of the new kind and drops the old ones at once.",
});

/** A payload filter: checked by the use case (operators, limits, data fields), so only its shape here. */
export const EventFilterSchema = z
  .preprocess(
    (filter, ctx) => {
      // zod copies a record key by key and drops a "__proto__" key: refused here, before it is lost.
      if (typeof filter === "object" && filter !== null && Object.hasOwn(filter, "__proto__")) {
        ctx.issues.push({
          code: "custom",
          path: ["__proto__"],
          message: "is not a field a filter can name",
          input: filter,
        });
      }
      return filter;
    },
    z.record(z.string(), z.unknown()),
  )
  .openapi("EventFilter", {
    description:
      "Only events matching this MongoDB-style query over the envelope are delivered (no filter: every event). Fields: `type`, `resource_id`, `occurred_at` (compared as an instant), `data.<path>` (a field of the endpoint's event types). Operators: `$eq $ne $in $nin $gt $gte $lt $lte $exists $regex` (`$options`: i, m, s) `$not` on a field, `$and $or $nor` on clauses. Values compare only with values of the same JSON type. At most 4096 bytes, 10 levels, 200 keys and items, 8 `$regex` of at most 256 characters (no backreferences or lookaround).",
    example: { "data.channel": "email", "data.message_type": { $ne: "marketing" } },
  });

export const filter = EventFilterSchema.nullable();

export const RateLimitSchema = z
  .strictObject({
    per_second: intRange(1, RATE_LIMIT_MAX.second).optional(),
    per_minute: intRange(1, RATE_LIMIT_MAX.minute).optional(),
  })
  .superRefine((o, ctx) => {
    if ((o.per_second === undefined) === (o.per_minute === undefined))
      ctx.addIssue({ code: "custom", message: "must have exactly one of per_second, per_minute" });
  })
  // Not a named component: the generator would make the component itself nullable, and a union with
  // null would report a bad field inside as a bad rate_limit as a whole.
  .openapi({
    minProperties: 1,
    maxProperties: 1,
    example: { per_second: 5 },
    description:
      "Exactly one of `per_second` (1-1000) and `per_minute` (1-60000). Deliveries to the endpoint start at " +
      "least period/count apart, across every Herald process; those over the limit wait (still `pending`).",
  });

export const rateLimit = RateLimitSchema.nullable();

export const ordering = z.enum(ORDERINGS).openapi({
  description:
    '"fifo": events arrive in the order Herald accepted them, one at a time; a failing event holds the ' +
    'ones after it until it succeeds or is given up. "none" (the default): no order, several at a time.',
});

// Mutual TLS (ADR 22). The PEM rules are the use case's, so each issue names its field; sizes are here.
export const clientCertificateInput = z
  .strictObject({
    certificate: z
      .string()
      .max(MAX_CERTIFICATE_PEM_LENGTH)
      .openapi({
        description: `The client certificate in PEM, followed by any intermediate certificates (not the root), at most ${MAX_CERTIFICATE_PEM_LENGTH} characters. Must be valid now, match \`private_key\`, and allow client authentication when it lists extended key usages.`,
        example: "-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n",
      }),
    private_key: z
      .string()
      .max(MAX_PRIVATE_KEY_PEM_LENGTH)
      .openapi({
        description: `Its private key in PEM (PKCS #8, PKCS #1 or SEC 1; RSA, EC or Ed25519), at most ${MAX_PRIVATE_KEY_PEM_LENGTH} characters. Sealed at rest (AES-256-GCM under HERALD_MASTER_KEY) and never shown again.`,
        example: "-----BEGIN PRIVATE KEY-----\nMIGH...\n-----END PRIVATE KEY-----\n",
      }),
    passphrase: z.string().min(1).max(MAX_PASSPHRASE_LENGTH).optional().openapi({
      description:
        "Only for an encrypted private key: Herald decrypts the key with it once and keeps the key sealed, not the passphrase.",
    }),
  })
  .openapi({
    description:
      "A client certificate Herald presents when the receiver asks for one (mutual TLS). The key is never shown again; answers show the certificate's facts (`client_certificate`).",
  });

export const ClientCertificateSchema = z
  .object({
    subject: z.string().openapi({ example: "CN=herald.example.com, O=Example" }),
    issuer: z.string().openapi({ example: "CN=Receiver Client CA" }),
    not_before: timestamp("Start of the validity period."),
    not_after: timestamp(
      "End of the validity period: after it the receiver refuses the certificate; replace it before.",
    ),
    fingerprint_sha256: z.string().openapi({
      example:
        "39:b5:bf:da:fe:ab:d3:04:69:cd:a6:87:d6:a3:cb:4f:b8:40:ff:49:95:37:a2:16:55:a6:d4:5c:1f:39:61:00",
      description: "SHA-256 of the certificate's DER, lowercase hex pairs joined by colons.",
    }),
  })
  .openapi("ClientCertificate", {
    description:
      "The client certificate presented to the receiver (mutual TLS): public facts only, never the key.",
  });
