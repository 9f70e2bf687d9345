import { createJsonLogger } from "../adapters/json-logger.ts";
import { NoMongoBinaryError } from "../adapters/mongo/embedded.ts";
import { type Config, ConfigError, parseConfig } from "../app/config.ts";
import type { Logger } from "../app/logger.ts";
import type { Sender } from "../app/ports/sending.ts";
import { createHerald, type Herald } from "./herald.ts";
import { SAME_STOP_WITHIN_MS, stopSignals } from "./signals.ts";
import { LegacyDataDirError } from "./store.ts";

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
  if (rt.name === "deno" && rt.env.OTEL_DENO?.trim().toLowerCase() === "true") {
    // Deno's fetch instrumentation adds its own traceparent to every request (ADR 24).
    logger.warn(
      "OTEL_DENO=true: Deno adds its own traceparent to every delivery (a second one when Herald traces, one of Deno's own when it does not); unset OTEL_DENO and use the OTEL_EXPORTER_OTLP_* variables",
    );
  }
  // Herald does not use HTTP_PROXY or HTTPS_PROXY (ADR 21), but Bun's and Deno's fetch read them from the
  // process's environment, at each request (Bun) or when the first one is made (Deno), and would send
  // direct deliveries through that proxy by host name, outside the address check. Removed from this
  // process's environment before anything is fetched: every runtime then delivers alike.
  if (rt.name !== "node" && config.ambientProxyVariables.length > 0) {
    for (const name of config.ambientProxyVariables) delete rt.env[name];
    logger.warn(
      `${config.ambientProxyVariables.join(", ")} set: ignored, as on every runtime (removed from this ${rt.name} process's environment, which its fetch reads); deliveries go direct or through HERALD_DELIVERY_PROXY`,
      { variables: config.ambientProxyVariables },
    );
  }
  let herald: Herald;
  try {
    herald = await createHerald({
      config,
      logger,
      store: config.store,
      makeSender: rt.makeSender,
    });
  } catch (e) {
    console.error(
      `herald: ${e instanceof NoMongoBinaryError || e instanceof LegacyDataDirError ? e.message : `could not start: ${(e as Error).message}`}`,
    );
    rt.exit(1);
  }
  let served: Served;
  try {
    served = await rt.serve(herald.fetch, config);
  } catch (e) {
    console.error(`herald: cannot listen on ${config.host}:${config.port}: ${listenError(e)}`);
    await herald.stop(Math.min(config.deliveryTimeoutMs + 2_000, 30_000)).catch(() => {});
    rt.exit(1);
  }
  logger.info("herald listening", {
    host: config.host,
    port: served.port,
    runtime: rt.name,
    runtime_version: runtimeVersion(),
  });
  // The proxy's address only: its credentials never reach a log line.
  if (config.deliveryProxy)
    logger.info("deliveries go through an egress proxy", { proxy: config.deliveryProxy.display });

  const stopRequest = stopSignals(() => Date.now());
  const shutdown = async (signal: string) => {
    const request = stopRequest();
    if (request === "echo") {
      // The same Ctrl-C passed on by npm (or the group's other signal): the stop under way answers it.
      logger.debug("stop signal repeated: the same stop", { signal, within_ms: SAME_STOP_WITHIN_MS });
      return;
    }
    if (request === "now") {
      // A second stop asked for later means "now": the shards are given back first (bounded), so the next
      // owner need not wait out the leases; what is in flight is sent again by a later claim.
      logger.warn("stopping at once", { signal });
      await stopAtOnce(herald);
      return rt.exit(1);
    }
    logger.info("stopping", { signal });
    const graceMs = Math.min(config.deliveryTimeoutMs + 2_000, 30_000);
    // Never hang on the way out (a client holding a connection open, a store that stopped answering); even
    // then the shards go back if they can.
    const watchdog = setTimeout(async () => {
      logger.error("stop did not finish in time; exiting", { signal });
      await stopAtOnce(herald);
      rt.exit(1);
    }, graceMs + 10_000);
    try {
      herald.endStreams();
      await served.close();
      await herald.stop(graceMs);
    } catch (e) {
      logger.error("stop failed", { error: e as Error });
      rt.exit(1);
    }
    clearTimeout(watchdog);
    logger.info("stopped");
    rt.exit(0);
  };
  rt.onSignal("SIGTERM", () => void shutdown("SIGTERM"));
  rt.onSignal("SIGINT", () => void shutdown("SIGINT"));
}

/** How long a stop "at once" may spend giving its shards back before the process exits anyway. */
export const AT_ONCE_DEADLINE_MS = 2_000;

/** Stops with no grace (the shards go back even with sends in flight), giving up after AT_ONCE_DEADLINE_MS. */
async function stopAtOnce(herald: Herald): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    herald.stop(0).catch(() => {}),
    new Promise<void>((r) => {
      timer = setTimeout(r, AT_ONCE_DEADLINE_MS);
    }),
  ]);
  clearTimeout(timer);
}

/** The running runtime's own version (Bun and Deno report a Node version too, so they are asked first). */
function runtimeVersion(): string | undefined {
  const g = globalThis as {
    Bun?: { version: string };
    Deno?: { version: { deno: string } };
    process?: { versions?: { node?: string } };
  };
  return g.Bun?.version ?? g.Deno?.version.deno ?? g.process?.versions?.node;
}

/** One line for a failed listen, whatever the runtime's error looks like. */
function listenError(e: unknown): string {
  const err = e as { code?: unknown; name?: unknown; message?: unknown };
  const text = `${String(err?.code ?? "")} ${String(err?.name ?? "")} ${String(err?.message ?? e)}`;
  if (/EADDRINUSE|AddrInUse|in use/i.test(text)) return "the address is already in use (set PORT or HOST)";
  if (/EACCES|PermissionDenied|permission/i.test(text)) return "permission denied (set PORT above 1023)";
  if (/EADDRNOTAVAIL|AddrNotAvailable|ENOTFOUND|getaddrinfo|lookup address/i.test(text))
    return "no such local address (set HOST)";
  return String(err?.message ?? e).split("\n")[0] ?? "unknown error";
}
