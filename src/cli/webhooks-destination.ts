// `herald webhooks create --kind kafka|rabbitmq|sqs ...`: a broker destination from command-line options
// (ADR 27). Credentials come from environment variables, never arguments (a shell's history and `ps`
// would show them); the API checks everything else and answers 422 naming the field.
import { readFileSync } from "node:fs";
import type { Webhook } from "../../clients/typescript/client.ts";
import { splitList } from "./arg-values.ts";
import { type Command, usageError } from "./command.ts";
import type { Io } from "./io.ts";

export const PASSWORD_ENV = "HERALD_DESTINATION_PASSWORD";
export const SQS_SECRET_ENV = "HERALD_SQS_SECRET_ACCESS_KEY";
export const SQS_TOKEN_ENV = "HERALD_SQS_SESSION_TOKEN";

/** The parseArgs spec of the destination options. */
export const DESTINATION_ARGS = {
  kind: { type: "string" },
  brokers: { type: "string", multiple: true },
  topic: { type: "string" },
  key: { type: "string" },
  "no-tls": { type: "boolean", default: false },
  "tls-ca": { type: "string" },
  "sasl-mechanism": { type: "string" },
  "sasl-username": { type: "string" },
  "amqp-url": { type: "string" },
  exchange: { type: "string" },
  "routing-key": { type: "string" },
  "queue-url": { type: "string" },
  region: { type: "string" },
  "access-key-id": { type: "string" },
  "endpoint-url": { type: "string" },
} as const;

export const DESTINATION_OPTIONS: [string, string][] = [
  ["--kind KIND", "https (default: --url), or kafka, rabbitmq, sqs: a broker destination instead of a URL"],
  ["--brokers HOST:PORT,...", "kafka: 1-10 bootstrap brokers (repeatable)"],
  ["--topic TOPIC", "kafka: the topic"],
  [
    "--key resource|endpoint",
    "kafka, sqs (FIFO): record key / group id: the event's resource_id (default) or the endpoint id",
  ],
  ["--no-tls", "kafka: plaintext to the brokers (default TLS)"],
  ["--tls-ca FILE", "kafka: PEM CA certificates to trust for the brokers' TLS"],
  [
    "--sasl-mechanism M",
    `kafka: plain, scram-sha-256 or scram-sha-512, with --sasl-username; the password from ${PASSWORD_ENV}`,
  ],
  ["--sasl-username USER", "kafka: the SASL user"],
  ["--amqp-url URL", `rabbitmq: amqps://user@host:port/vhost; the password from ${PASSWORD_ENV}`],
  ["--exchange NAME", 'rabbitmq: the exchange ("" or left out: the default exchange)'],
  ["--routing-key KEY", "rabbitmq: the routing key"],
  ["--queue-url URL", "sqs: the queue URL"],
  ["--region REGION", "sqs: the queue's region"],
  [
    "--access-key-id ID",
    `sqs: the access key id; the secret from ${SQS_SECRET_ENV} (and ${SQS_TOKEN_ENV} if temporary)`,
  ],
  ["--endpoint-url URL", "sqs: an SQS-compatible server's URL instead of AWS's"],
];

type Values = {
  [K in keyof typeof DESTINATION_ARGS]?: (typeof DESTINATION_ARGS)[K] extends { multiple: true }
    ? string[]
    : (typeof DESTINATION_ARGS)[K] extends { type: "boolean" }
      ? boolean
      : string;
};

const KAFKA_FLAGS = ["brokers", "topic", "no-tls", "tls-ca", "sasl-mechanism", "sasl-username"] as const;
const RABBITMQ_FLAGS = ["amqp-url", "exchange", "routing-key"] as const;
const SQS_FLAGS = ["queue-url", "region", "access-key-id", "endpoint-url"] as const;

/** The body fields of a broker endpoint (`kind` and its object); null for HTTPS (no --kind, or https). */
export function destinationBody(command: Command, io: Io, v: Values): Record<string, unknown> | null {
  const kind = v.kind ?? "https";
  const given = (flags: readonly (keyof Values)[]) =>
    flags.filter((f) => v[f] !== undefined && v[f] !== false);
  const others = {
    https: [...KAFKA_FLAGS, ...RABBITMQ_FLAGS, ...SQS_FLAGS, "key"],
    kafka: [...RABBITMQ_FLAGS, ...SQS_FLAGS],
    rabbitmq: [...KAFKA_FLAGS, ...SQS_FLAGS, "key"],
    sqs: [...KAFKA_FLAGS, ...RABBITMQ_FLAGS],
  }[kind] as (keyof Values)[] | undefined;
  if (!others) throw usageError(command, "--kind must be https, kafka, rabbitmq or sqs");
  const stray = given(others);
  if (stray.length) throw usageError(command, `--${stray[0]} is not an option of --kind ${kind}`);
  if (kind === "https") return null;
  const need = (flag: keyof Values) => {
    if (v[flag] === undefined) throw usageError(command, `--kind ${kind} needs --${flag}`);
    return v[flag] as string;
  };
  const secret = (name: string) => io.env[name] || undefined;
  const key = v.key === undefined ? {} : { key: v.key };
  if (kind === "kafka") {
    const brokers = splitList(v.brokers);
    if (!brokers) throw usageError(command, "--kind kafka needs --brokers");
    const password = secret(PASSWORD_ENV);
    const wantsSasl = v["sasl-mechanism"] !== undefined || v["sasl-username"] !== undefined;
    if (wantsSasl && !password) throw usageError(command, `SASL needs the password in ${PASSWORD_ENV}`);
    const sasl = wantsSasl
      ? { sasl: { mechanism: need("sasl-mechanism"), username: need("sasl-username"), password } }
      : {};
    const tls =
      v["tls-ca"] !== undefined
        ? { tls: { ca: readPem(command, v["tls-ca"]) } }
        : v["no-tls"]
          ? { tls: false }
          : {};
    return { kind, kafka: { brokers, topic: need("topic"), ...key, ...tls, ...sasl } };
  }
  if (kind === "rabbitmq") {
    const password = secret(PASSWORD_ENV);
    return {
      kind,
      rabbitmq: {
        url: need("amqp-url"),
        ...(password ? { password } : {}),
        ...(v.exchange === undefined ? {} : { exchange: v.exchange }),
        ...(v["routing-key"] === undefined ? {} : { routing_key: v["routing-key"] }),
      },
    };
  }
  const secretKey = secret(SQS_SECRET_ENV);
  if (!secretKey) throw usageError(command, `--kind sqs needs the secret access key in ${SQS_SECRET_ENV}`);
  const token = secret(SQS_TOKEN_ENV);
  return {
    kind,
    sqs: {
      queue_url: need("queue-url"),
      region: need("region"),
      access_key_id: need("access-key-id"),
      secret_access_key: secretKey,
      ...(token ? { session_token: token } : {}),
      ...(v["endpoint-url"] === undefined ? {} : { endpoint_url: v["endpoint-url"] }),
      ...key,
    },
  };
}

/** A PEM file's text, or a usage error naming --tls-ca. */
export function readPem(command: Command, file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    throw usageError(
      command,
      `--tls-ca: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? "error"})`,
    );
  }
}

/** A broker endpoint's destination for people, credentials as the API shows them (masked). */
export function destinationLines(w: Webhook): [string, unknown][] {
  if (w.kind === "kafka") {
    const k = w.kafka;
    const tls = typeof k.tls === "object" ? "yes (own CA)" : k.tls ? "yes" : "no";
    const sasl = k.sasl
      ? `${k.sasl.mechanism}, user ${k.sasl.username}, password ${k.sasl.password}`
      : "none";
    return [
      [
        "kafka",
        [`brokers ${k.brokers.join(",")}`, `topic ${k.topic}`, `key ${k.key}`, `tls ${tls}`, `sasl ${sasl}`],
      ],
    ];
  }
  if (w.kind === "rabbitmq") {
    const r = w.rabbitmq;
    return [
      [
        "rabbitmq",
        [
          `url ${r.url}`,
          `password ${r.password ?? "none"}`,
          `exchange "${r.exchange}"`,
          `routing key "${r.routing_key}"`,
        ],
      ],
    ];
  }
  if (w.kind === "sqs") {
    const s = w.sqs;
    return [
      [
        "sqs",
        [
          `queue ${s.queue_url}`,
          `region ${s.region}`,
          `access key id ${s.access_key_id}`,
          `secret access key ${s.secret_access_key}`,
          `session token ${s.session_token ?? "none"}`,
          `endpoint url ${s.endpoint_url ?? "AWS's"}`,
          `key ${s.key}`,
        ],
      ],
    ];
  }
  return [];
}
