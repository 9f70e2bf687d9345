import https from "node:https";
import type { Socket } from "node:net";

/**
 * An HTTPS receiver on 127.0.0.1 that holds every request open until the test releases it, so a test can
 * act while an attempt is in flight, deterministically, instead of racing the delivery engine:
 *
 *   const rx = await startHoldingReceiver(tls);
 *   ... register rx.url, publish ...
 *   await rx.held(1);        // the attempt is now in flight and stays so
 *   ... DELETE the endpoint ...
 *   rx.release(200);         // answers every held request
 */
export interface HoldingReceiver {
  url: string;
  /** Requests received so far (held or answered). */
  readonly received: number;
  /** Resolves once `count` requests have arrived (and are held). No deadline: the caller's test has one. */
  held(count: number): Promise<void>;
  /** Answers every held request (and every later one, at once) with `status`. */
  release(status?: number): void;
  close(): Promise<void>;
}

export async function startHoldingReceiver(tls: { cert: string; key: string }): Promise<HoldingReceiver> {
  let received = 0;
  let releasedWith: number | null = null;
  const holding: Array<(status: number) => void> = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const sockets = new Set<Socket>();
  const server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    req.resume();
    req.on("end", () => {
      received++;
      const answer = (status: number) => res.writeHead(status).end("ok");
      if (releasedWith !== null) answer(releasedWith);
      else holding.push(answer);
      for (const w of waiters.splice(0)) {
        if (received >= w.count) w.resolve();
        else waiters.push(w);
      }
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `https://127.0.0.1:${port}/hold`,
    get received() {
      return received;
    },
    held: (count) =>
      received >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    release(status = 200) {
      releasedWith = status;
      for (const answer of holding.splice(0)) answer(status);
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
