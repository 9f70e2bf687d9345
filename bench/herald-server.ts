// The Herald under benchmark: the real process wiring (createHerald) with the store the run asks for
// (HERALD_STORE=memory|mongo). It creates its own API token, because an in-memory store has no CLI
// to create one, and prints {"port","token"} as its first stdout line. The run gives every process the
// same tenant and project (BENCH_TENANT_ID, BENCH_PROJECT_ID), so several processes serve one project.
import { serve } from "@hono/node-server";
import { createUndiciSender } from "../src/adapters/delivery/undici-sender.ts";
import { createJsonLogger } from "../src/adapters/json-logger.ts";
import { systemClock, systemIds } from "../src/adapters/system.ts";
import { parseConfig } from "../src/app/config.ts";
import { tokenUseCases } from "../src/app/tokens.ts";
import { createHerald } from "../src/main/herald.ts";

const config = parseConfig(process.env);
const herald = await createHerald({
  config,
  // stdout carries the ready line; logs go to stderr.
  logger: createJsonLogger(config.logLevel, (line) => process.stderr.write(`${line}\n`)),
  store: config.store,
  printFirstToken: false,
  makeSender: (c) =>
    createUndiciSender({
      timeoutMs: c.deliveryTimeoutMs,
      allowPrivateNetworks: c.allowPrivateNetworks,
      userAgent: "Herald/bench",
      maxConnectionsPerOrigin: 64,
    }),
});
const { token } = await tokenUseCases({
  tokens: herald.repos.tokens,
  clock: systemClock,
  ids: systemIds,
}).create({
  name: "bench",
  tenantId: process.env.BENCH_TENANT_ID,
  projectId: process.env.BENCH_PROJECT_ID,
});
const server = serve({ fetch: herald.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
  process.stdout.write(`${JSON.stringify({ port: info.port, token })}\n`);
});
process.on("SIGTERM", async () => {
  // Never outlive the benchmark, even when the database stopped answering.
  setTimeout(() => process.exit(1), 15_000).unref();
  server.close();
  await herald.stop(5_000);
  process.exit(0);
});
