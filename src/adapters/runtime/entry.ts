import { type Config, ConfigError, parseConfig } from "../../app/config.ts";
import type { Logger } from "../../app/logger.ts";
import type { Sender } from "../../app/ports.ts";
import { createJsonLogger } from "../json-logger.ts";
import { NoMongoBinaryError } from "./embedded-mongo.ts";
import { createHerald, type Herald } from "./herald-process.ts";

export interface Served {
  port: number;
  close(): Promise<void> | void;
}

export interface RuntimeBinding {
  name: "node" | "bun" | "deno";
  env: Record<string, string | undefined>;
  makeSender(config: Config): Sender;
  serve(fetch: Herald["fetch"], config: Config): Promise<Served> | Served;
  onSignal(signal: "SIGTERM" | "SIGINT", handler: () => void): void;
  exit(code: number): never;
}

/** What every entry point does, whatever the runtime: parse config, start Herald, serve, stop cleanly. */
export async function runHerald(rt: RuntimeBinding): Promise<void> {
  let config: Config;
  try {
    config = parseConfig(rt.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`herald: ${e.message}`);
      rt.exit(2);
    }
    throw e;
  }
  const logger: Logger = createJsonLogger(config.logLevel);
  let herald: Herald;
  try {
    herald = await createHerald({
      config,
      logger,
      store: rt.env.HERALD_STORE === "memory" ? "memory" : "mongo",
      makeSender: rt.makeSender,
    });
  } catch (e) {
    console.error(`herald: ${e instanceof NoMongoBinaryError ? e.message : `could not start: ${(e as Error).message}`}`);
    rt.exit(1);
  }
  const served = await rt.serve(herald.fetch, config);
  logger.info("herald listening", { host: config.host, port: served.port, runtime: rt.name });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info("stopping", { signal });
    await served.close();
    await herald.stop(Math.min(config.deliveryTimeoutMs + 2_000, 30_000));
    logger.info("stopped");
    rt.exit(0);
  };
  rt.onSignal("SIGTERM", () => void shutdown("SIGTERM"));
  rt.onSignal("SIGINT", () => void shutdown("SIGINT"));
}
