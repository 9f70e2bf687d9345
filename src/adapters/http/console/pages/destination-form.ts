// A broker destination as the console's forms give it (ADR 27): a new endpoint's whole destination, or
// a merge patch of an endpoint's one, read from form fields named after the API's paths (`kafka_topic`
// for `kafka.topic`), so the use cases' issues land beside the field they name. The forms only state
// shapes, as the API's schema does; every rule is the use case's. Credentials are read exactly as typed
// and never kept in what a page shows again (a `Draft`).
import {
  type BrokerDestination,
  DESTINATION_KINDS,
  type DestinationKind,
  MESSAGE_KEYS,
  type MessageKey,
  SASL_MECHANISMS,
  type SaslMechanism,
} from "../../../../domain/destination.ts";
import { splitAmqpUrl } from "../../../../domain/destination-rules.ts";
import type { DestinationPatch } from "../../../../domain/destination-values.ts";
import { invalid, type ValidationIssue } from "../../../../domain/errors.ts";
import { type Form, field } from "../forms.ts";

/** The password boxes: read as typed (a space may be part of a password), never shown again. */
export const CREDENTIAL_FIELDS = [
  "kafka_sasl_password",
  "rabbitmq_password",
  "sqs_secret_access_key",
  "sqs_session_token",
] as const;

/** What a form showed, as typed, to show again after an error: never a credential. */
export type Draft = Readonly<Record<string, string>>;

/** A form's text fields for showing again: credentials dropped, a password written in an AMQP URL cut out. */
export function draftOf(form: Form): Draft {
  const out: Record<string, string> = {};
  for (const name of Object.keys(form)) {
    if ((CREDENTIAL_FIELDS as readonly string[]).includes(name) || name === "_csrf") continue;
    out[name] = field(form, name);
  }
  if (out.rabbitmq_url) out.rabbitmq_url = withoutUrlPassword(out.rabbitmq_url);
  return out;
}

function withoutUrlPassword(text: string): string {
  const split = splitAmqpUrl(text);
  if (!("message" in split)) return split.url;
  // Not a URL `new URL` reads: cut anything between `//user:` and `@` all the same.
  return text.replace(/^([^:]*:\/\/[^:/@]*):[^@]*@/, "$1@");
}

/** A credential box as typed; undefined when left empty. */
const credential = (form: Form, name: string): string | undefined => {
  const v = form[name];
  const first = Array.isArray(v) ? v[0] : v;
  return typeof first === "string" && first !== "" ? first : undefined;
};

const ticked = (form: Form, name: string) => field(form, name) === "yes";

/** A value of a closed list, or an issue at `path`. */
function oneOf<T extends string>(
  list: readonly T[],
  text: string,
  path: string,
  issues: ValidationIssue[],
): T | undefined {
  if ((list as readonly string[]).includes(text)) return text as T;
  issues.push({ path, message: `must be one of ${list.join(", ")}` });
  return undefined;
}

/** The kind chosen on the new endpoint form (HTTPS when none). */
export function kindOf(form: Form): DestinationKind {
  const text = field(form, "kind") || "https";
  const issues: ValidationIssue[] = [];
  const kind = oneOf(DESTINATION_KINDS, text, "kind", issues);
  if (!kind) throw invalid(issues);
  return kind;
}

/** Brokers typed one per line or separated by commas. */
export const brokerList = (text: string): string[] =>
  text
    .split(/[\n,]/)
    .map((b) => b.trim())
    .filter(Boolean);

/** TLS from its select and CA box: on, off, or `{ca}`; a CA pasted without choosing it is an issue, not dropped. */
function tlsOf(form: Form, issues: ValidationIssue[]): boolean | { ca: string } | undefined {
  const ca = field(form, "kafka_tls_ca");
  const mode = oneOf(["on", "off", "ca"], field(form, "kafka_tls") || "on", "kafka.tls", issues);
  if (mode === "ca") return { ca };
  if (ca && mode) {
    issues.push({ path: "kafka.tls.ca", message: 'is only used with TLS "on, trusting this CA"' });
    return undefined;
  }
  return mode === undefined ? undefined : mode === "on";
}

/** A new endpoint's destination of `kind` (null for HTTPS), defaults as the API's. */
export function newDestinationOf(form: Form, kind: DestinationKind): BrokerDestination<string> | null {
  const issues: ValidationIssue[] = [];
  const key = (name: string, path: string) =>
    oneOf(MESSAGE_KEYS, field(form, name) || "resource", path, issues) ?? "resource";
  let d: BrokerDestination<string> | null = null;
  if (kind === "kafka") {
    const mechanism = field(form, "kafka_sasl_mechanism") || "none";
    const username = field(form, "kafka_sasl_username");
    const password = credential(form, "kafka_sasl_password");
    let sasl: { mechanism: SaslMechanism; username: string; password: string } | null = null;
    if (mechanism === "none") {
      if (username || password)
        issues.push({
          path: "kafka.sasl.mechanism",
          message: "must be chosen for a SASL username and password (or leave them empty)",
        });
    } else {
      const m = oneOf(SASL_MECHANISMS, mechanism, "kafka.sasl.mechanism", issues);
      if (m) sasl = { mechanism: m, username, password: password ?? "" };
    }
    d = {
      kind,
      brokers: brokerList(field(form, "kafka_brokers")),
      topic: field(form, "kafka_topic"),
      key: key("kafka_key", "kafka.key"),
      tls: tlsOf(form, issues) ?? true,
      sasl,
    };
  } else if (kind === "rabbitmq") {
    d = {
      kind,
      url: field(form, "rabbitmq_url"),
      password: credential(form, "rabbitmq_password") ?? null,
      exchange: field(form, "rabbitmq_exchange"),
      routingKey: field(form, "rabbitmq_routing_key"),
    };
  } else if (kind === "sqs") {
    d = {
      kind,
      queueUrl: field(form, "sqs_queue_url"),
      region: field(form, "sqs_region"),
      accessKeyId: field(form, "sqs_access_key_id"),
      secretAccessKey: credential(form, "sqs_secret_access_key") ?? "",
      sessionToken: credential(form, "sqs_session_token") ?? null,
      endpointUrl: field(form, "sqs_endpoint_url") || null,
      key: key("sqs_key", "sqs.key"),
    };
  }
  if (issues.length) throw invalid(issues);
  return d;
}

/**
 * The merge patch the destination form of an endpoint asks for: its shown fields as they are (set
 * again when unchanged), a credential only when typed, null where a Remove box is ticked.
 */
export function destinationPatchOf(form: Form, kind: Exclude<DestinationKind, "https">): DestinationPatch {
  const issues: ValidationIssue[] = [];
  const bothGiven = (box: string, credentialField: string, path: string) => {
    if (ticked(form, box) && credential(form, credentialField) !== undefined)
      issues.push({ path, message: "was typed and ticked for removal: do one or the other" });
  };
  let patch: DestinationPatch;
  if (kind === "kafka") {
    const mechanism = field(form, "kafka_sasl_mechanism") || "none";
    const username = field(form, "kafka_sasl_username");
    const password = credential(form, "kafka_sasl_password");
    bothGiven("kafka_sasl_remove", "kafka_sasl_password", "kafka.sasl.password");
    let sasl: Extract<DestinationPatch, { kind: "kafka" }>["sasl"];
    if (ticked(form, "kafka_sasl_remove")) sasl = null;
    else if (mechanism !== "none") {
      const m = oneOf(SASL_MECHANISMS, mechanism, "kafka.sasl.mechanism", issues);
      sasl = { mechanism: m, username: username || undefined, password };
    } else if (username || password)
      issues.push({
        path: "kafka.sasl.mechanism",
        message: "must be chosen for a SASL username and password (or leave them empty)",
      });
    patch = {
      kind,
      brokers: brokerList(field(form, "kafka_brokers")),
      topic: field(form, "kafka_topic"),
      key: oneOf(MESSAGE_KEYS, field(form, "kafka_key"), "kafka.key", issues),
      tls: tlsOf(form, issues),
      ...(sasl === undefined ? {} : { sasl }),
    };
  } else if (kind === "rabbitmq") {
    bothGiven("rabbitmq_password_remove", "rabbitmq_password", "rabbitmq.password");
    patch = {
      kind,
      url: field(form, "rabbitmq_url"),
      password: ticked(form, "rabbitmq_password_remove") ? null : credential(form, "rabbitmq_password"),
      exchange: field(form, "rabbitmq_exchange"),
      routingKey: field(form, "rabbitmq_routing_key"),
    };
  } else {
    bothGiven("sqs_session_token_remove", "sqs_session_token", "sqs.session_token");
    patch = {
      kind,
      queueUrl: field(form, "sqs_queue_url"),
      region: field(form, "sqs_region"),
      accessKeyId: field(form, "sqs_access_key_id"),
      secretAccessKey: credential(form, "sqs_secret_access_key"),
      sessionToken: ticked(form, "sqs_session_token_remove") ? null : credential(form, "sqs_session_token"),
      endpointUrl: field(form, "sqs_endpoint_url") || null,
      key: oneOf(MESSAGE_KEYS, field(form, "sqs_key"), "sqs.key", issues) as MessageKey,
    };
  }
  if (issues.length) throw invalid(issues);
  return patch;
}

/** The form field an issue's path names: `kafka.brokers.1` is `kafka_brokers`, `kafka.sasl` its mechanism. */
export function fieldOfPath(path: string): string {
  const name = path
    .replace(/^body\./, "")
    .replace(/\.\d+$/, "")
    .replaceAll(".", "_");
  if (name === "kafka_sasl") return "kafka_sasl_mechanism";
  // Another kind's object named in a change (`rabbitmq` on a Kafka endpoint): the kind is at fault.
  if (name === "kafka" || name === "rabbitmq" || name === "sqs") return "kind";
  return name;
}

/** Issues by the field they sit beside; a broker's line number said with its message. */
export function fieldIssues(issues: readonly ValidationIssue[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const i of issues) {
    const name = fieldOfPath(i.path);
    const line = /^(?:body\.)?kafka\.brokers\.(\d+)$/.exec(i.path);
    const message = line ? `line ${Number(line[1]) + 1}: ${i.message}` : i.message;
    out.set(name, [...(out.get(name) ?? []), message]);
  }
  return out;
}
