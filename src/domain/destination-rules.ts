// What a broker destination's settings must satisfy (ADR 27), as pure functions returning every issue
// at once, each located by its path (`kafka.brokers.0`, `sqs.queue_url`, ...). Credentials are checked
// by credentialIssues only where given in plain text: kept ones are sealed and were checked when set.
import type { BrokerDestination, DestinationKind } from "./destination.ts";
import { type EndpointUrlPolicy, endpointUrlIssues, isDnsName } from "./endpoint-url.ts";
import type { ValidationIssue } from "./errors.ts";
import { classifyIpAddress } from "./ip-address.ts";

export const MAX_KAFKA_BROKERS = 10;
/** Kafka's own topic rule (`Topic.validate`): legal characters, at most 249, not `.` or `..`. */
const KAFKA_TOPIC = /^[A-Za-z0-9._-]{1,249}$/;
/** AMQP 0-9-1's exchange name rule; at most 255 bytes like every short string. */
const AMQP_EXCHANGE = /^[A-Za-z0-9_.:-]*$/;
export const AMQP_SHORTSTR_BYTES = 255;
/** A queue URL's path: `/<account>/<name>`, the name 1-80 of `[A-Za-z0-9_-]`, `.fifo` included. */
const SQS_QUEUE_PATH = /^\/[^/]+\/([A-Za-z0-9_-]{1,75}\.fifo|[A-Za-z0-9_-]{1,80})$/;
const SQS_REGION = /^[a-z0-9-]{1,64}$/;
const ACCESS_KEY_ID = /^[A-Za-z0-9]{1,128}$/;
/** SQS message attribute names (AWS's rule: the test server does not enforce it, so Herald does). */
const SQS_ATTRIBUTE_NAME = /^[A-Za-z0-9_.-]{1,256}$/;
/** SQS allows 10 message attributes; the 3 signature headers take three of them. */
export const SQS_MAX_ATTRIBUTES = 10;
export const SIGNATURE_HEADER_COUNT = 3;
export const MAX_CREDENTIAL_LENGTH = 4096;
/** A PEM CA bundle to trust for a Kafka cluster's TLS. */
export const MAX_CA_PEM_LENGTH = 65_536;

/** True when the destination's address is a URL the HTTPS rules judge (SQS), else host:port pairs. */
export function isBrokerKind(kind: string): kind is Exclude<DestinationKind, "https"> {
  return kind === "kafka" || kind === "rabbitmq" || kind === "sqs";
}

/** A `host:port` split, the host without brackets; null when it is not one. */
export function splitHostPort(text: string): { host: string; port: number } | null {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]/\s@]+)):(\d{1,5})$/.exec(text);
  if (!m) return null;
  const port = Number(m[3]);
  if (port < 1 || port > 65_535) return null;
  return { host: (m[1] ?? m[2])!, port };
}

/** Problems with a broker's host: a DNS name or IP literal, and a public one unless private networks are allowed. */
export function brokerHostIssues(host: string, allowPrivate: boolean, path: string): ValidationIssue[] {
  const kind = classifyIpAddress(host);
  if (kind === null && !isDnsName(host))
    return [
      { path, message: "must name a host of at most 253 characters, in dot-separated labels of 1 to 63" },
    ];
  if (kind !== null && kind !== "public" && !allowPrivate)
    return [
      {
        path,
        message: `must not point at a ${kind} address (${host}); this server accepts only public addresses`,
      },
    ];
  return [];
}

/** True when the text holds a C0 control character (a NUL would end a SASL field early). */
const hasControl = (s: string) => [...s].some((c) => c.charCodeAt(0) < 0x20);

const utf8Bytes = (s: string) => new TextEncoder().encode(s).length;

/** Every problem with a destination's settings (not its credentials), paths under the kind's name. */
export function destinationIssues(
  d: BrokerDestination<unknown>,
  policy: EndpointUrlPolicy,
): ValidationIssue[] {
  if (d.kind === "kafka") return kafkaIssues(d, policy);
  if (d.kind === "rabbitmq") return rabbitmqIssues(d, policy);
  return sqsIssues(d, policy);
}

function kafkaIssues(d: BrokerDestination<unknown> & { kind: "kafka" }, policy: EndpointUrlPolicy) {
  const issues: ValidationIssue[] = [];
  if (d.brokers.length < 1 || d.brokers.length > MAX_KAFKA_BROKERS)
    issues.push({ path: "kafka.brokers", message: `must list 1 to ${MAX_KAFKA_BROKERS} brokers` });
  const seen = new Set<string>();
  d.brokers.forEach((b, i) => {
    const path = `kafka.brokers.${i}`;
    const hp = splitHostPort(b);
    if (!hp)
      issues.push({ path, message: "must be host:port (an IPv6 address in brackets), the port 1-65535" });
    else issues.push(...brokerHostIssues(hp.host, policy.allowPrivateNetworks, path));
    if (seen.has(b.toLowerCase())) issues.push({ path, message: "is listed twice" });
    seen.add(b.toLowerCase());
  });
  if (!KAFKA_TOPIC.test(d.topic) || d.topic === "." || d.topic === "..")
    issues.push({
      path: "kafka.topic",
      message: "must be 1-249 of letters, digits, '.', '_' and '-', and not '.' or '..' (Kafka's rule)",
    });
  if (typeof d.tls === "object") {
    const ca = d.tls.ca;
    if (ca.length > MAX_CA_PEM_LENGTH || !/-----BEGIN CERTIFICATE-----/.test(ca))
      issues.push({
        path: "kafka.tls.ca",
        message: `must be PEM certificates (-----BEGIN CERTIFICATE-----), at most ${MAX_CA_PEM_LENGTH} characters`,
      });
  }
  if (d.sasl && (d.sasl.username.length < 1 || d.sasl.username.length > 255 || hasControl(d.sasl.username)))
    issues.push({
      path: "kafka.sasl.username",
      message: "must be 1-255 characters without control characters",
    });
  return issues;
}

/** An AMQP URL split into the URL kept (no password) and the password taken out of it, or an issue. */
export function splitAmqpUrl(
  text: string,
  path = "rabbitmq.url",
): { url: string; password: string | null } | ValidationIssue {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return { path, message: "must be an absolute amqp:// or amqps:// URL" };
  }
  if (u.protocol !== "amqp:" && u.protocol !== "amqps:")
    return { path, message: "must use amqps:// or amqp://" };
  const password = u.password === "" ? null : decodeURIComponent(u.password);
  u.password = "";
  return { url: u.href, password };
}

function rabbitmqIssues(d: BrokerDestination<unknown> & { kind: "rabbitmq" }, policy: EndpointUrlPolicy) {
  const issues: ValidationIssue[] = [];
  const path = "rabbitmq.url";
  if (d.url.length > 2048) issues.push({ path, message: "must be at most 2048 characters" });
  const split = splitAmqpUrl(d.url, path);
  if ("message" in split) issues.push(split);
  else {
    const u = new URL(split.url);
    // `new URL` keeps a non-special scheme's host as written: IPv6 in brackets, case as given.
    const host = u.hostname.replace(/^\[|\]$/g, "");
    if (!host) issues.push({ path, message: "must name a host" });
    else issues.push(...brokerHostIssues(host.toLowerCase(), policy.allowPrivateNetworks, path));
    if (u.search || u.hash)
      issues.push({
        path,
        message: "must not contain a query or fragment: Herald sets the connection's parameters",
      });
    if (u.port !== "" && (Number(u.port) < 1 || Number(u.port) > 65_535))
      issues.push({ path, message: "must have a port of 1-65535" });
  }
  if (utf8Bytes(d.exchange) > AMQP_SHORTSTR_BYTES || !AMQP_EXCHANGE.test(d.exchange))
    issues.push({
      path: "rabbitmq.exchange",
      message: "must be at most 255 of letters, digits, '-', '_', '.' and ':' (\"\": the default exchange)",
    });
  if (utf8Bytes(d.routingKey) > AMQP_SHORTSTR_BYTES)
    issues.push({ path: "rabbitmq.routing_key", message: "must be at most 255 bytes (UTF-8)" });
  return issues;
}

function sqsIssues(d: BrokerDestination<unknown> & { kind: "sqs" }, policy: EndpointUrlPolicy) {
  const urlPolicy = { allowHttp: policy.allowHttp, allowPrivateNetworks: policy.allowPrivateNetworks };
  const issues = endpointUrlIssues(d.queueUrl, urlPolicy, "sqs.queue_url");
  if (issues.length === 0) {
    const u = new URL(d.queueUrl);
    if (!SQS_QUEUE_PATH.test(u.pathname) || u.search)
      issues.push({
        path: "sqs.queue_url",
        message:
          "must be a queue URL, https://<host>/<account>/<queue name> (1-80 of letters, digits, '-', '_', '.fifo' at the end for FIFO)",
      });
  }
  if (d.endpointUrl !== null) issues.push(...endpointUrlIssues(d.endpointUrl, urlPolicy, "sqs.endpoint_url"));
  if (!SQS_REGION.test(d.region))
    issues.push({
      path: "sqs.region",
      message: "must be a region name such as eu-west-1 (lowercase letters, digits, '-')",
    });
  if (!ACCESS_KEY_ID.test(d.accessKeyId))
    issues.push({ path: "sqs.access_key_id", message: "must be 1-128 letters and digits" });
  return issues;
}

/** True for a FIFO queue: its messages get a group id and a deduplication id. */
export function isFifoQueue(queueUrl: string): boolean {
  return queueUrl.endsWith(".fifo");
}

/**
 * Problems with an SQS endpoint's custom headers as message attributes (AWS's rules, ADR 27): at most
 * 10 attributes with the 3 signature headers, so 7 custom ones; names `[A-Za-z0-9_.-]{1,256}`, not
 * starting or ending with `.`, no `..`, not starting with `AWS.` or `Amazon.` in any case.
 */
export function sqsAttributeIssues(names: readonly string[], path = "headers"): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const max = SQS_MAX_ATTRIBUTES - SIGNATURE_HEADER_COUNT;
  if (names.length > max)
    issues.push({
      path,
      message: `must have at most ${max} headers on an SQS endpoint: SQS allows ${SQS_MAX_ATTRIBUTES} message attributes and the signature takes ${SIGNATURE_HEADER_COUNT}`,
    });
  for (const name of names) {
    const lower = name.toLowerCase();
    if (
      !SQS_ATTRIBUTE_NAME.test(name) ||
      name.startsWith(".") ||
      name.endsWith(".") ||
      name.includes("..") ||
      lower.startsWith("aws.") ||
      lower.startsWith("amazon.")
    )
      issues.push({
        path: `${path}.${name}`,
        message:
          "is not an SQS message attribute name: letters, digits, '_', '-', '.', not starting or ending with '.', no '..', not starting with AWS. or Amazon.",
      });
  }
  return issues;
}

/** Problems with a credential given in plain text (a password, a secret key, a token). */
export function credentialIssues(value: string, path: string): ValidationIssue[] {
  if (value.length < 1 || value.length > MAX_CREDENTIAL_LENGTH)
    return [{ path, message: `must be 1-${MAX_CREDENTIAL_LENGTH} characters` }];
  if (value === "********")
    return [{ path, message: "must be the credential itself, not the mask answers show" }];
  return [];
}
