import { type BrokerServer, brokerUnavailable, run, startBroker } from "./broker-server.ts";
import type { TestTls } from "./tls.ts";

/** Why RabbitMQ cannot be had here (tests skip with it, CI fails), or null. */
export const rabbitmqUnavailable = (): string | null => brokerUnavailable("rabbitmq.sh", "RABBITMQ_URL");

/** The run's RabbitMQ (RABBITMQ_URL) or a node of this file's own, by scripts/rabbitmq.sh: env.RABBITMQ_URL. */
export const startRabbitmq = (own = false): Promise<BrokerServer> =>
  startBroker("rabbitmq.sh", "RABBITMQ_URL", ["RABBITMQ_URL"], own);

/**
 * A node of this file's own with an amqps listener presenting `tls`'s server certificate (localhost,
 * 127.0.0.1): env.RABBITMQ_URL (plain) and env.RABBITMQ_TLS_URL (amqps, guest).
 */
export const startRabbitmqTls = (tls: TestTls): Promise<BrokerServer> =>
  startBroker("rabbitmq.sh", "RABBITMQ_URL", ["RABBITMQ_URL", "RABBITMQ_TLS_URL"], true, {
    RABBITMQ_TLS_CERT: tls.certPath,
    RABBITMQ_TLS_KEY: tls.keyPath,
  });

/** The directory of RabbitMQ's Java client jars, fetched by scripts/rabbitmq.sh when missing. */
export async function amqpClientJars(): Promise<string> {
  return (await run("scripts/rabbitmq.sh", ["client"])).trim();
}
