// `herald webhooks update ID --topic ...`: a merge patch of a broker endpoint's destination (ADR 27).
// The kind comes from the options given (or --kind); credentials only from the environment, and only
// when --password-from-env asks, so an exported variable never changes an endpoint by surprise.
import { splitList } from "./arg-values.ts";
import { type Command, usageError } from "./command.ts";
import type { Io } from "./io.ts";
import { PASSWORD_ENV, readPem, SQS_SECRET_ENV, SQS_TOKEN_ENV } from "./webhooks-destination.ts";

export const DESTINATION_UPDATE_ARGS = {
  kind: { type: "string" },
  brokers: { type: "string", multiple: true },
  topic: { type: "string" },
  key: { type: "string" },
  tls: { type: "boolean", default: false },
  "no-tls": { type: "boolean", default: false },
  "tls-ca": { type: "string" },
  "sasl-mechanism": { type: "string" },
  "sasl-username": { type: "string" },
  "no-sasl": { type: "boolean", default: false },
  "amqp-url": { type: "string" },
  exchange: { type: "string" },
  "routing-key": { type: "string" },
  "queue-url": { type: "string" },
  region: { type: "string" },
  "access-key-id": { type: "string" },
  "endpoint-url": { type: "string" },
  "password-from-env": { type: "boolean", default: false },
} as const;

export const DESTINATION_UPDATE_OPTIONS: [string, string][] = [
  ["--brokers, --topic, --key, --tls | --no-tls, --tls-ca FILE", "kafka: change these (as on create)"],
  ["--sasl-mechanism M, --sasl-username U | --no-sasl", "kafka: change SASL, or turn it off"],
  ["--amqp-url, --exchange, --routing-key", "rabbitmq: change these"],
  [
    "--queue-url, --region, --access-key-id, --endpoint-url",
    'sqs: change these (--endpoint-url "" clears it)',
  ],
  [
    "--password-from-env",
    `Set the credential from ${PASSWORD_ENV} (kafka, rabbitmq) or ${SQS_SECRET_ENV} and ${SQS_TOKEN_ENV} (sqs)`,
  ],
];

type Values = { [K in keyof typeof DESTINATION_UPDATE_ARGS]?: string | string[] | boolean };

const FLAGS = {
  kafka: ["brokers", "topic", "tls", "no-tls", "tls-ca", "sasl-mechanism", "sasl-username", "no-sasl"],
  rabbitmq: ["amqp-url", "exchange", "routing-key"],
  sqs: ["queue-url", "region", "access-key-id", "endpoint-url"],
} as const;
type Kind = keyof typeof FLAGS;

/** The `kafka`, `rabbitmq` or `sqs` merge patch the options ask for (with `kind`), or {} for none. */
export function destinationPatchBody(command: Command, io: Io, v: Values): Record<string, unknown> {
  const set = (f: keyof Values) => v[f] !== undefined && v[f] !== false;
  const kinds = (Object.keys(FLAGS) as Kind[]).filter((k) => FLAGS[k].some(set));
  if (kinds.length > 1) throw usageError(command, `options of ${kinds.join(" and ")} exclude each other`);
  const given = v.kind as string | undefined;
  if (given !== undefined && !["https", "kafka", "rabbitmq", "sqs"].includes(given))
    throw usageError(command, "--kind must be https, kafka, rabbitmq or sqs");
  if (given !== undefined && kinds[0] && kinds[0] !== given)
    throw usageError(command, `--${FLAGS[kinds[0]].find(set)} is not an option of --kind ${given}`);
  const kind = (kinds[0] ?? given) as Kind | "https" | undefined;
  if (kind === undefined || kind === "https") {
    if (set("key") || set("password-from-env"))
      throw usageError(command, "--key and --password-from-env need --kind or an option of the destination");
    return kind === "https" ? { kind } : {};
  }
  const str = (f: keyof Values) => (v[f] === undefined ? {} : { [f.replaceAll("-", "_")]: v[f] as string });
  const env = (name: string) => io.env[name] || undefined;
  const needEnv = (name: string) => {
    const value = env(name);
    if (!value) throw usageError(command, `--password-from-env needs ${name}`);
    return value;
  };
  const fromEnv = set("password-from-env");
  const key = set("key") ? { key: v.key } : {};
  if (kind === "kafka") {
    if (set("tls") && (set("no-tls") || set("tls-ca")))
      throw usageError(command, "--tls, --no-tls and --tls-ca exclude each other");
    if (set("no-sasl") && (set("sasl-mechanism") || set("sasl-username") || fromEnv))
      throw usageError(command, "--no-sasl excludes the other SASL options");
    const brokers = splitList(v.brokers as string[] | undefined);
    const tls = set("tls") ? { tls: true } : set("no-tls") ? { tls: false } : {};
    const ca = v["tls-ca"] === undefined ? {} : { tls: { ca: readPem(command, v["tls-ca"] as string) } };
    const sasl = set("no-sasl")
      ? { sasl: null }
      : set("sasl-mechanism") || set("sasl-username") || fromEnv
        ? {
            sasl: {
              ...(v["sasl-mechanism"] === undefined ? {} : { mechanism: v["sasl-mechanism"] }),
              ...(v["sasl-username"] === undefined ? {} : { username: v["sasl-username"] }),
              ...(fromEnv ? { password: needEnv(PASSWORD_ENV) } : {}),
            },
          }
        : {};
    return {
      kind,
      kafka: { ...(brokers ? { brokers } : {}), ...str("topic"), ...key, ...tls, ...ca, ...sasl },
    };
  }
  if (kind === "rabbitmq") {
    if (set("key")) throw usageError(command, "--key is not an option of --kind rabbitmq");
    const password = fromEnv ? { password: needEnv(PASSWORD_ENV) } : {};
    const url = v["amqp-url"] === undefined ? {} : { url: v["amqp-url"] };
    return { kind, rabbitmq: { ...url, ...str("exchange"), ...str("routing-key"), ...password } };
  }
  const endpointUrl =
    v["endpoint-url"] === undefined ? {} : { endpoint_url: (v["endpoint-url"] as string) || null };
  const secret = fromEnv
    ? { secret_access_key: needEnv(SQS_SECRET_ENV), session_token: env(SQS_TOKEN_ENV) ?? null }
    : {};
  return {
    kind,
    sqs: {
      ...str("queue-url"),
      ...str("region"),
      ...str("access-key-id"),
      ...endpointUrl,
      ...key,
      ...secret,
    },
  };
}
