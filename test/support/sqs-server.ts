import { createHash } from "node:crypto";
import { type BrokerServer, brokerUnavailable, startBroker } from "./broker-server.ts";
import { signV4 } from "./sigv4.ts";

/** Why an SQS-compatible server cannot be had here (tests skip with it, CI fails), or null. */
export const sqsUnavailable = (): string | null => brokerUnavailable("sqs.sh", "SQS_ENDPOINT");

const NAMES = ["SQS_ENDPOINT", "SQS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"];

/** The run's SQS server (SQS_ENDPOINT and the rest) or one of this file's own, by scripts/sqs.sh. */
export async function startSqs(own = false): Promise<BrokerServer> {
  const server = await startBroker("sqs.sh", "SQS_ENDPOINT", NAMES, own);
  server.env.SQS_REGION ||= "us-east-1";
  server.env.AWS_ACCESS_KEY_ID ||= "AKIAHERALDTESTQUEUE7";
  server.env.AWS_SECRET_ACCESS_KEY ||= "herald/Test+Secret/not-a-real-key";
  return server;
}

export class SqsError extends Error {
  readonly action: string;
  readonly status: number;
  readonly type: string;
  constructor(action: string, status: number, type: string, message: string) {
    super(`${action}: ${status} ${type}: ${message}`);
    this.action = action;
    this.status = status;
    this.type = type;
  }
}

/** One SQS action over the JSON protocol (AmazonSQS.<action>), signed with SigV4; its parsed answer. */
export async function sqsCall(
  env: Record<string, string>,
  action: string,
  input: object,
): Promise<Record<string, unknown>> {
  const url = `${env.SQS_ENDPOINT}/`;
  const body = JSON.stringify(input);
  const headers = signV4({
    method: "POST",
    url,
    headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": `AmazonSQS.${action}` },
    body,
    region: env.SQS_REGION ?? "us-east-1",
    service: "sqs",
    accessKeyId: env.AWS_ACCESS_KEY_ID ?? "",
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? "",
  });
  const res = await fetch(url, { method: "POST", headers, body });
  const text = await res.text();
  const answer = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
  if (res.status !== 200) {
    const type = String(answer.__type ?? "").replace(/^.*#/, "");
    throw new SqsError(action, res.status, type, String(answer.message ?? answer.Message ?? text));
  }
  return answer;
}

/**
 * Up to `want` messages of `queue`, each deleted once read, with their attributes. Bounded: a long poll of
 * 1 s per round, a fixed number of rounds (fewer than `want` come back when no more arrive).
 */
export async function sqsReceiveAll<T extends { ReceiptHandle: string }>(
  env: Record<string, string>,
  queue: string,
  want: number,
): Promise<T[]> {
  const got: T[] = [];
  for (let round = 0; round < 30 && got.length < want; round++) {
    const answer = await sqsCall(env, "ReceiveMessage", {
      QueueUrl: queue,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 1,
      MessageAttributeNames: ["All"],
      MessageSystemAttributeNames: ["All"],
    });
    for (const m of (answer.Messages ?? []) as T[]) {
      got.push(m);
      await sqsCall(env, "DeleteMessage", { QueueUrl: queue, ReceiptHandle: m.ReceiptHandle });
    }
  }
  return got;
}

export type StringAttributes = Record<string, { DataType: "String"; StringValue: string }>;

/**
 * MD5OfMessageAttributes as SQS computes it: per attribute in name order, the length-prefixed (4 bytes,
 * big-endian) UTF-8 name, the length-prefixed data type, a transport byte (1 for String and Number), then
 * the length-prefixed value; the MD5 of all of it, in hex. A sender compares it with SendMessage's answer.
 */
export function md5OfStringAttributes(attributes: StringAttributes): string {
  const field = (s: string) => {
    const bytes = Buffer.from(s, "utf8");
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    return [length, bytes];
  };
  const parts: Buffer[] = [];
  for (const name of Object.keys(attributes).sort()) {
    const a = attributes[name] as StringAttributes[string];
    parts.push(...field(name), ...field(a.DataType), Buffer.from([1]), ...field(a.StringValue));
  }
  return createHash("md5").update(Buffer.concat(parts)).digest("hex");
}
