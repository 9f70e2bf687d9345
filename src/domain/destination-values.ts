// Deriving from a broker destination (ADR 27): the credential-free address shown as `url`, a copy with
// its credentials mapped (sealed, opened, masked), and a change applied as a JSON merge patch.
import type {
  BrokerDestination,
  KafkaDestination,
  MessageKey,
  RabbitmqDestination,
  SqsDestination,
} from "./destination.ts";

/** What every answer, page and log shows in place of a credential (as for custom header values). */
export const CREDENTIAL_MASK = "********";

/**
 * The destination's address without credentials, shown as the endpoint's `url`:
 * `kafka://b1:9092,b2:9092/orders`, `amqps://herald@mq.example.com/prod?exchange=events&routing_key=orders`,
 * or the queue URL.
 */
export function destinationUrl(d: BrokerDestination<unknown>): string {
  if (d.kind === "kafka") return `kafka://${d.brokers.join(",")}/${d.topic}`;
  if (d.kind === "sqs") return d.queueUrl;
  const q = `exchange=${encodeURIComponent(d.exchange)}&routing_key=${encodeURIComponent(d.routingKey)}`;
  return `${d.url}?${q}`;
}

/** The same destination with each credential passed through `f` (seal, open, mask); other fields shared. */
export async function mapCredentials<A, B>(
  d: BrokerDestination<A>,
  f: (credential: A) => B | Promise<B>,
): Promise<BrokerDestination<B>> {
  if (d.kind === "kafka") return { ...d, sasl: d.sasl && { ...d.sasl, password: await f(d.sasl.password) } };
  if (d.kind === "rabbitmq") return { ...d, password: d.password === null ? null : await f(d.password) };
  return {
    ...d,
    secretAccessKey: await f(d.secretAccessKey),
    sessionToken: d.sessionToken === null ? null : await f(d.sessionToken),
  };
}

/** The destination as answers show it: every credential the mask (synchronous `mapCredentials`). */
export function maskedDestination(d: BrokerDestination<unknown>): BrokerDestination<typeof CREDENTIAL_MASK> {
  const m = CREDENTIAL_MASK;
  if (d.kind === "kafka") return { ...d, sasl: d.sasl && { ...d.sasl, password: m } };
  if (d.kind === "rabbitmq") return { ...d, password: d.password === null ? null : m };
  return { ...d, secretAccessKey: m, sessionToken: d.sessionToken === null ? null : m };
}

type Patch<T> = { [K in keyof T]?: T[K] };

/** A change of a destination: fields given are set (null clears a nullable one), absent ones kept. */
export type DestinationPatch =
  | (Patch<Omit<KafkaDestination<string>, "kind" | "sasl">> & {
      kind: "kafka";
      sasl?: Patch<NonNullable<KafkaDestination<string>["sasl"]>> | null;
    })
  | (Patch<Omit<RabbitmqDestination<string>, "kind">> & { kind: "rabbitmq" })
  | (Patch<Omit<SqsDestination<string>, "kind">> & { kind: "sqs" });

/** A change that is not a whole destination: what is missing, by path. */
export interface MissingFields {
  missing: string[];
}

const pick = <T>(given: T | undefined, kept: T): T => (given === undefined ? kept : given);

/**
 * The destination after a merge patch (RFC 7396 in spirit: what is absent is kept), its credentials
 * held as `C`: kept ones as they were, given ones passed through `wrap`. A `sasl` object merges into the
 * current one; turning SASL on needs all three of its fields. A different kind is the caller's to refuse.
 */
export function mergeDestination<C>(
  current: BrokerDestination<C>,
  patch: DestinationPatch,
  wrap: (plain: string) => C,
): BrokerDestination<C> | MissingFields {
  if (current.kind === "kafka" && patch.kind === "kafka") {
    let sasl: KafkaDestination<C>["sasl"] = current.sasl;
    if (patch.sasl === null) sasl = null;
    else if (patch.sasl !== undefined) {
      const { mechanism, username, password } = patch.sasl;
      const base = current.sasl;
      if (!base && (mechanism === undefined || username === undefined || password === undefined))
        return { missing: ["kafka.sasl.mechanism", "kafka.sasl.username", "kafka.sasl.password"] };
      sasl = {
        mechanism: mechanism ?? base!.mechanism,
        username: username ?? base!.username,
        password: password === undefined ? base!.password : wrap(password),
      };
    }
    return {
      kind: "kafka",
      brokers: pick(patch.brokers, current.brokers),
      topic: pick(patch.topic, current.topic),
      key: pick<MessageKey>(patch.key, current.key),
      tls: pick(patch.tls, current.tls),
      sasl,
    };
  }
  if (current.kind === "rabbitmq" && patch.kind === "rabbitmq") {
    return {
      kind: "rabbitmq",
      url: pick(patch.url, current.url),
      password:
        patch.password === undefined
          ? current.password
          : patch.password === null
            ? null
            : wrap(patch.password),
      exchange: pick(patch.exchange, current.exchange),
      routingKey: pick(patch.routingKey, current.routingKey),
    };
  }
  if (current.kind === "sqs" && patch.kind === "sqs") {
    return {
      kind: "sqs",
      queueUrl: pick(patch.queueUrl, current.queueUrl),
      region: pick(patch.region, current.region),
      accessKeyId: pick(patch.accessKeyId, current.accessKeyId),
      secretAccessKey:
        patch.secretAccessKey === undefined ? current.secretAccessKey : wrap(patch.secretAccessKey),
      sessionToken:
        patch.sessionToken === undefined
          ? current.sessionToken
          : patch.sessionToken === null
            ? null
            : wrap(patch.sessionToken),
      endpointUrl: pick(patch.endpointUrl, current.endpointUrl),
      key: pick<MessageKey>(patch.key, current.key),
    };
  }
  throw new Error(`a ${patch.kind} change cannot apply to a ${current.kind} destination`);
}

/** Text (a broker's error, a thrown message) with every plain credential of `d` replaced by the mask. */
export function withoutCredentials(text: string, d: BrokerDestination<string>): string {
  const plain =
    d.kind === "kafka"
      ? [d.sasl?.password]
      : d.kind === "rabbitmq"
        ? [d.password, d.password && encodeURIComponent(d.password)]
        : [d.secretAccessKey, d.sessionToken];
  let out = text;
  for (const c of plain) if (c) out = out.split(c).join(CREDENTIAL_MASK);
  return out;
}

/** The plain credentials a patch (or a whole new destination) gives, by path, for credentialIssues. */
export function givenCredentials(patch: DestinationPatch | BrokerDestination<string>): [string, string][] {
  const out: [string, string][] = [];
  if (patch.kind === "kafka" && patch.sasl?.password !== undefined)
    out.push(["kafka.sasl.password", patch.sasl.password]);
  if (patch.kind === "rabbitmq" && typeof patch.password === "string")
    out.push(["rabbitmq.password", patch.password]);
  if (patch.kind === "sqs") {
    if (patch.secretAccessKey !== undefined) out.push(["sqs.secret_access_key", patch.secretAccessKey]);
    if (typeof patch.sessionToken === "string") out.push(["sqs.session_token", patch.sessionToken]);
  }
  return out;
}
