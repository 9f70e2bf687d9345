import { type BrokerServer, brokerUnavailable, run, startBroker } from "./broker-server.ts";

/** Why RabbitMQ cannot be had here (tests skip with it, CI fails), or null. */
export const rabbitmqUnavailable = (): string | null => brokerUnavailable("rabbitmq.sh", "RABBITMQ_URL");

/** The run's RabbitMQ (RABBITMQ_URL) or a node of this file's own, by scripts/rabbitmq.sh: env.RABBITMQ_URL. */
export const startRabbitmq = (own = false): Promise<BrokerServer> =>
  startBroker("rabbitmq.sh", "RABBITMQ_URL", ["RABBITMQ_URL"], own);

/** The directory of RabbitMQ's Java client jars, fetched by scripts/rabbitmq.sh when missing. */
export async function amqpClientJars(): Promise<string> {
  return (await run("scripts/rabbitmq.sh", ["client"])).trim();
}
