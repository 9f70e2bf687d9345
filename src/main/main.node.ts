import { serve } from "@hono/node-server";
import { proxyRoute } from "../adapters/delivery/proxy-tunnel.ts";
import { createUndiciSender } from "../adapters/delivery/undici-sender.ts";
import { VERSION } from "../version.ts";
import { runHerald } from "./run.ts";

await runHerald({
  name: "node",
  env: process.env,
  makeSender: (c) =>
    createUndiciSender({
      timeoutMs: c.deliveryTimeoutMs,
      allowPrivateNetworks: c.allowPrivateNetworks,
      userAgent: `Herald/${VERSION}`,
      proxy: proxyRoute(c),
    }),
  serve: (fetch, c) =>
    new Promise((resolve, reject) => {
      const server = serve({ fetch, port: c.port, hostname: c.host }, (info) => {
        server.off("error", reject);
        resolve({ port: info.port, close: () => new Promise<void>((r) => server.close(() => r())) });
      });
      // A failed listen (port in use, bad HOST) is reported by runHerald as one line, not as a crash.
      server.once("error", reject);
    }),
  onSignal: (s, h) => process.on(s, h),
  exit: (code) => process.exit(code),
});
