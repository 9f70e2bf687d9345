import { type BrokerServer, brokerUnavailable, run, startBroker } from "./broker-server.ts";

/** Why Kafka cannot be had here (tests skip with it, CI fails), or null. */
export const kafkaUnavailable = (): string | null => brokerUnavailable("kafka.sh", "KAFKA_BROKERS");

/** The run's Kafka (KAFKA_BROKERS), or one of this file's own (always when `own`) by scripts/kafka.sh. */
export const startKafka = (own = false): Promise<BrokerServer> =>
  startBroker("kafka.sh", "KAFKA_BROKERS", ["KAFKA_BROKERS"], own);

/** The directory of Kafka's jars (kafka-clients among them), fetched by scripts/kafka.sh when missing. */
export async function kafkaJars(): Promise<string> {
  return (await run("scripts/kafka.sh", ["bin"])).trim();
}
