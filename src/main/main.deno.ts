// Deno entry point: Deno.serve for HTTP, the fetch sender for deliveries.
import process from "node:process";
import { createFetchSender } from "../adapters/delivery/fetch-sender.ts";
import { proxyRoute } from "../adapters/delivery/proxy-tunnel.ts";
import { VERSION } from "../version.ts";
import { runHerald } from "./run.ts";

interface DenoServer {
  addr: { port: number };
  shutdown(): Promise<void>;
}
declare const Deno: {
  serve(
    o: { port: number; hostname: string; onListen?: () => void },
    h: (r: Request) => Response | Promise<Response>,
  ): DenoServer;
  addSignalListener(s: "SIGTERM" | "SIGINT", h: () => void): void;
  exit(code: number): never;
};

await runHerald({
  name: "deno",
  env: process.env,
  makeSender: (c) =>
    createFetchSender({
      timeoutMs: c.deliveryTimeoutMs,
      allowPrivateNetworks: c.allowPrivateNetworks,
      userAgent: `Herald/${VERSION}`,
      proxy: proxyRoute(c),
    }),
  serve: (fetch, c) => {
    const server = Deno.serve({ port: c.port, hostname: c.host, onListen: () => {} }, fetch);
    return { port: server.addr.port, close: () => server.shutdown() };
  },
  onSignal: (s, h) => Deno.addSignalListener(s, h),
  exit: (code) => Deno.exit(code),
});
