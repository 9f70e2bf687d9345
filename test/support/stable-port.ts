import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { freePort } from "./herald-process.ts";

/**
 * A free loopback port outside the kernel's ephemeral range, for a server a test stops and starts again
 * on the same port (a database, a proxy). A port from `listen(0)` comes from the ephemeral range, where
 * any outgoing connection or any other test's `listen(0)` on a busy machine may take it while the server
 * is down, and then the server cannot come back on it (or something else answers there). Falls back to
 * `freePort()` where the range cannot be read.
 */
export async function stablePort(): Promise<number> {
  const low = ephemeralLow();
  if (low === null || low <= 11_000) return freePort();
  for (let tries = 0; tries < 50; tries++) {
    const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
    if (await bindable(port)) return port;
  }
  return freePort();
}

function ephemeralLow(): number | null {
  try {
    const [low] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/);
    const n = Number(low);
    return Number.isInteger(n) ? n : null;
  } catch {
    return null;
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}
