/**
 * A message as an independent consumer read it from a broker (Kafka record, AMQP message, SQS message),
 * in the shape the whole-system tests check: the body as received and the headers rebuilt from the
 * record headers, AMQP headers or message attributes, as a consumer would hand them to a verifier.
 */
export interface Consumed {
  /** The topic or queue it was read from. */
  destination: string;
  /** Kafka's record key or SQS FIFO's group id; null where the broker has none. */
  key: string | null;
  body: string;
  headers: Record<string, string>;
  /** Where the broker kept it, in the shape of Herald's receipt for that broker (e.g. {partition, offset}). */
  place: Record<string, string | number>;
  /** When the consumer read it (ms since the epoch). */
  at: number;
}
