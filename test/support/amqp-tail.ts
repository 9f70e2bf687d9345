import { type ChannelModel, connect } from "amqplib";
import type { Consumed } from "./consumed.ts";

/** A running independent AMQP consumer (amqplib, no Herald code) and what it has read. */
export interface AmqpTail {
  readonly records: Consumed[];
  close(): Promise<void>;
}

/**
 * Declares a durable direct exchange and a durable queue bound to it with `routingKey`, then consumes
 * the queue, acknowledging each message after keeping it; when the node goes away it connects again
 * (every 500 ms) and goes on, so what the node kept across a restart is read then. Headers are AMQP long
 * strings, which amqplib hands over as strings (or Buffers): both become text.
 */
export async function startAmqpTail(
  url: string,
  exchange: string,
  queue: string,
  routingKey: string,
): Promise<AmqpTail> {
  const records: Consumed[] = [];
  let closed = false;
  let current: ChannelModel | null = null;
  const attach = async () => {
    const conn = await connect(url);
    current = conn;
    const ch = await conn.createChannel();
    await ch.assertExchange(exchange, "direct", { durable: true });
    await ch.assertQueue(queue, { durable: true });
    await ch.bindQueue(queue, exchange, routingKey);
    await ch.consume(queue, (m) => {
      if (!m) return;
      records.push({
        destination: queue,
        key: null,
        body: m.content.toString("utf8"),
        headers: Object.fromEntries(
          Object.entries(m.properties.headers ?? {}).map(([k, v]) => [
            k,
            Buffer.isBuffer(v) ? v.toString() : String(v),
          ]),
        ),
        place: { message_id: String(m.properties.messageId), redelivered: String(m.fields.redelivered) },
        at: Date.now(),
      });
      ch.ack(m);
    });
    conn.on("error", () => {});
    conn.on("close", () => {
      if (!closed) void reconnect();
    });
  };
  const reconnect = async () => {
    while (!closed) {
      try {
        await attach();
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
  await attach();
  return {
    records,
    async close() {
      closed = true;
      await (current as ChannelModel | null)?.close().catch(() => {});
    },
  };
}
