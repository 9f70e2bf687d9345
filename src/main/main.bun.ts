// Bun entry point: Bun.serve for HTTP, the fetch sender for deliveries.
import { createFetchSender } from "../adapters/delivery/fetch-sender.ts";
import { proxyRoute } from "../adapters/delivery/proxy-tunnel.ts";
import { VERSION } from "../version.ts";
import { runHerald } from "./run.ts";

interface BunServer {
  port: number;
  stop(closeActive?: boolean): Promise<void>;
}
declare const Bun: {
  serve(o: {
    fetch: (r: Request) => Response | Promise<Response>;
    port: number;
    hostname: string;
  }): BunServer;
};

await runHerald({
  name: "bun",
  env: process.env,
  makeSender: (c) =>
    createFetchSender({
      timeoutMs: c.deliveryTimeoutMs,
      allowPrivateNetworks: c.allowPrivateNetworks,
      userAgent: `Herald/${VERSION}`,
      proxy: proxyRoute(c),
    }),
  serve: (fetch, c) => {
    const server = Bun.serve({ fetch, port: c.port, hostname: c.host });
    return { port: server.port, close: () => server.stop() };
  },
  onSignal: (s, h) => process.on(s, h),
  exit: (code) => process.exit(code),
});
