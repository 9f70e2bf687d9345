import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BrokerServer } from "./broker-server.ts";
import { freePort } from "./herald-process.ts";

/**
 * Gives a Kafka of the file's own (scripts/kafka.sh, halted and resumed for it) a SASL_PLAINTEXT listener
 * with PLAIN and one user, advertised on its own port, so a client that authenticates there is served
 * there too (a listener added at run time cannot be advertised in KRaft: test/destinations/kafka-support.ts
 * has one for refusals only). Answers its `host:port`. The broker keeps it across later halts and resumes.
 */
export async function addAdvertisedSaslListener(
  kafka: BrokerServer,
  user: string,
  password: string,
): Promise<string> {
  if (!kafka.state) throw new Error("a SASL listener needs a Kafka of the file's own");
  const port = await freePort();
  await kafka.halt("clean");
  const file = join(kafka.state, "server.properties");
  const config = readFileSync(file, "utf8")
    .split("\n")
    .map((line) => {
      const [name] = line.split("=", 1);
      if (name === "listeners" || name === "advertised.listeners")
        return `${line},SASL_PLAINTEXT://127.0.0.1:${port}`;
      if (name === "listener.security.protocol.map") return `${line},SASL_PLAINTEXT:SASL_PLAINTEXT`;
      return line;
    });
  config.push(
    "sasl.enabled.mechanisms=PLAIN",
    `listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_${user}="${password}";`,
  );
  writeFileSync(file, `${config.join("\n")}\n`);
  await kafka.resume();
  return `127.0.0.1:${port}`;
}
