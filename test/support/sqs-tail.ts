import type { Consumed } from "./consumed.ts";

/** A running independent SQS consumer (raw ReceiveMessage calls, no Herald code) and what it has read. */
export interface SqsTail {
  readonly records: Consumed[];
  close(): Promise<void>;
}

interface Message {
  MessageId: string;
  ReceiptHandle: string;
  Body: string;
  Attributes?: Record<string, string>;
  MessageAttributes?: Record<string, { DataType: string; StringValue: string }>;
}

/**
 * One SQS action over the JSON protocol, unsigned: the tests' server (ElasticMQ, scripts/sqs.sh) checks no
 * signature, so this consumer needs none of Herald's SigV4 code.
 */
export async function sqsAction(
  endpoint: string,
  action: string,
  input: object,
): Promise<Record<string, unknown>> {
  const r = await fetch(`${endpoint}/`, {
    method: "POST",
    headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": `AmazonSQS.${action}` },
    body: JSON.stringify(input),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`SQS ${action}: ${r.status} ${text}`);
  // DeleteMessage answers with an empty body.
  return (text ? JSON.parse(text) : {}) as Record<string, unknown>;
}

/**
 * Long-polls `queueUrl` (ReceiveMessage, every attribute), keeping and deleting each message; a server
 * that went away is asked again every 500 ms until it is back. The headers are the String attributes;
 * `place` is the message id and, on a FIFO queue, the sequence number, as Herald's receipt names them.
 */
export function startSqsTail(endpoint: string, queueUrl: string): SqsTail {
  const records: Consumed[] = [];
  let open = true;
  const loop = (async () => {
    while (open) {
      try {
        const { Messages = [] } = (await sqsAction(endpoint, "ReceiveMessage", {
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageAttributeNames: ["All"],
          MessageSystemAttributeNames: ["All"],
        })) as { Messages?: Message[] };
        for (const m of Messages) {
          const attributes = m.Attributes ?? {};
          records.push({
            destination: queueUrl,
            key: attributes.MessageGroupId ?? null,
            body: m.Body,
            headers: Object.fromEntries(
              Object.entries(m.MessageAttributes ?? {}).map(([k, a]) => [k, a.StringValue]),
            ),
            place: {
              message_id: m.MessageId,
              ...(attributes.SequenceNumber ? { sequence_number: attributes.SequenceNumber } : {}),
            },
            at: Date.now(),
          });
          await sqsAction(endpoint, "DeleteMessage", { QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle });
        }
      } catch {
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  })();
  return {
    records,
    async close() {
      open = false;
      await loop;
    },
  };
}
