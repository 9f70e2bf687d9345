import { createServer, type Server } from "node:tls";
import { afterEach, describe, expect, it } from "vitest";
import { amqpTarget, RabbitProducer } from "../../../src/adapters/destinations/rabbitmq-producer.ts";
import { testTls } from "../../support/tls.ts";

// A refused broker certificate is a tls_error for every publish it fails: a publish that comes to the
// producer after its connection failed to open fails as the opening did, not as "connection closed".

let server: Server | null = null;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = null;
});

async function tlsServer(): Promise<number> {
  const tls = await testTls();
  server = createServer({ cert: tls.cert, key: tls.key }, (socket) => socket.end());
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return (server.address() as { port: number }).port;
}

describe("RabbitProducer on a broker whose certificate is refused", () => {
  it("fails every publish as tls_error, those after the failed opening too", async () => {
    const port = await tlsServer();
    const other = await testTls("another-ca");
    let gone = 0;
    const producer = new RabbitProducer(amqpTarget(`amqps://guest@localhost:${port}/`, "guest")!, {
      timeoutMs: 10_000,
      resolve: async () => [{ address: "127.0.0.1", family: 4 }],
      isBlocked: () => false,
      ca: other.caCert,
      connectionName: "test",
      onGone: () => gone++,
    });
    const publish = () => producer.publish("x", "k", Buffer.from("{}"), { messageId: crypto.randomUUID() });
    const first = await publish();
    expect(first).toMatchObject({ ok: false, error: "tls_error" });
    expect(gone).toBe(1);
    // The same producer, asked again before its pool dropped it: the opening's error, not "closed".
    expect(await publish()).toMatchObject({ ok: false, error: "tls_error" });
  });
});
