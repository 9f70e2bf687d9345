import { serve } from "@hono/node-server";
import { type LazySender, lazySender } from "../adapters/delivery/lazy-sender.ts";
import { VERSION } from "../version.ts";
import { runHerald } from "./run.ts";

// undici is loaded once Herald serves (warm() below), not before /readyz can answer; a delivery asked
// for sooner waits for it.
let sender: LazySender | undefined;
const WARM_AFTER_MS = 250;
await runHerald({
  name: "node",
  env: process.env,
  makeSender: (c) => {
    sender = lazySender(async () => {
      const [{ proxyRoute }, { createUndiciSender }] = await Promise.all([
        import("../adapters/delivery/proxy-tunnel.ts"),
        import("../adapters/delivery/undici-sender.ts"),
      ]);
      return createUndiciSender({
        timeoutMs: c.deliveryTimeoutMs,
        allowPrivateNetworks: c.allowPrivateNetworks,
        userAgent: `Herald/${VERSION}`,
        proxy: proxyRoute(c),
      });
    });
    return sender;
  },
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
// After the first requests had their turn: a health check right after the start is not held up.
setTimeout(() => sender?.warm(), WARM_AFTER_MS).unref();
