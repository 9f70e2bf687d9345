import { createHash } from "node:crypto";
import type { SendError } from "../../domain/delivery.ts";
import type { HeaderPairs } from "../../domain/signature-scheme.ts";

/** SQS message attributes of DataType String, by name. */
export type StringAttributes = Record<string, { DataType: "String"; StringValue: string }>;

export function stringAttributes(headers: HeaderPairs): StringAttributes {
  const attributes: StringAttributes = {};
  for (const [name, value] of headers) attributes[name] = { DataType: "String", StringValue: value };
  return attributes;
}

const md5 = (data: Uint8Array | string) => createHash("md5").update(data).digest("hex");

export const md5OfBody = (body: string): string => md5(Buffer.from(body, "utf8"));

/**
 * MD5OfMessageAttributes as SQS computes it: per attribute in name order, the length-prefixed (4 bytes,
 * big-endian) UTF-8 name, the length-prefixed data type, a transport byte (1 for String), then the
 * length-prefixed value; the MD5 of all of it, in hex.
 */
export function md5OfAttributes(attributes: StringAttributes): string {
  const parts: Buffer[] = [];
  const field = (s: string) => {
    const bytes = Buffer.from(s, "utf8");
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    parts.push(length, bytes);
  };
  for (const name of Object.keys(attributes).sort()) {
    const a = attributes[name] as StringAttributes[string];
    field(name);
    field(a.DataType);
    parts.push(Buffer.from([1]));
    field(a.StringValue);
  }
  return md5(Buffer.concat(parts));
}

/** What SQS counts against MaximumMessageSize: the body plus every attribute's name, type and value. */
export function messageSize(body: string, attributes: StringAttributes): number {
  let size = Buffer.byteLength(body, "utf8");
  for (const [name, a] of Object.entries(attributes)) {
    size +=
      Buffer.byteLength(name, "utf8") +
      Buffer.byteLength(a.DataType) +
      Buffer.byteLength(a.StringValue, "utf8");
  }
  return size;
}

/** A FIFO queue's URL ends in `.fifo`. */
export const isFifoQueue = (queueUrl: string): boolean => /\.fifo\/?$/.test(queueUrl);

/** SQS's error type from a JSON-protocol answer (`com.amazonaws.sqs#QueueDoesNotExist` → `QueueDoesNotExist`). */
export function sqsErrorType(answer: unknown): string {
  const a = (answer ?? {}) as { __type?: unknown; code?: unknown; Code?: unknown };
  const raw = String(a.__type ?? a.code ?? a.Code ?? "");
  return raw.replace(/^.*#/, "");
}

const NOT_FOUND = new Set(["QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue"]);
const AUTH = new Set([
  "InvalidClientTokenId",
  "SignatureDoesNotMatch",
  "AccessDenied",
  "AccessDeniedException",
  "UnrecognizedClientException",
  // AWS's JSON-protocol services name a wrong secret so (400), where the query protocol said SignatureDoesNotMatch.
  "InvalidSignatureException",
  "IncompleteSignature",
  "MissingAuthenticationToken",
  "ExpiredToken",
  "InvalidSecurity",
  "KMS.AccessDeniedException",
]);
const THROTTLED = new Set([
  "Throttling",
  "ThrottlingException",
  "RequestThrottled",
  "AWS.SimpleQueueService.RequestThrottled",
  "ServiceUnavailable",
  "InternalError",
  "InternalFailure",
]);

/**
 * Names an SQS answer that is not a 200 (ADR 27): a missing queue, refused credentials, a 5xx or a
 * throttle (a `connection_error`, so Herald's backoff retries it), a batch over SQS's size limit, any
 * other 4xx `broker_rejected`. A SendMessageBatch entry's failure is named as SendMessage's would be.
 */
export function sqsFailure(status: number, type: string): SendError {
  if (NOT_FOUND.has(type)) return "destination_not_found";
  if (type === "BatchRequestTooLong") return "message_too_large";
  if (AUTH.has(type)) return "auth_error";
  if (THROTTLED.has(type) || status >= 500 || status === 429) return "connection_error";
  if (status === 403 || status === 401) return "auth_error";
  if (status === 413) return "message_too_large";
  return "broker_rejected";
}
