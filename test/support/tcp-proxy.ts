import { connect, createServer, type Server, type Socket } from "node:net";
import { stablePort } from "./stable-port.ts";

/**
 * A TCP proxy on 127.0.0.1 for fault tests: every connection to `port` is relayed to `target`.
 * `cut()` resets every relayed connection and closes the listening port, so new connections are refused
 * (ECONNREFUSED), which is how a stopped database looks from the client's side; `restore()` listens on
 * the same port again.
 *
 *   const proxy = await startTcpProxy({ host: "127.0.0.1", port: 27017 });
 *   ... point the client at mongodb://127.0.0.1:${proxy.port}/ ...
 *   await proxy.cut(); ...; await proxy.restore();
 *   await proxy.close();
 */
export interface TcpProxy {
  port: number;
  /** Connections relayed since start. */
  readonly accepted: number;
  readonly isCut: boolean;
  /**
   * Stops listening until `restore()`, so new connections are refused. `mode` says what happens to the
   * open ones: "reset" (default) resets them, as a stopped process does; "silence" keeps them open but
   * drops everything sent either way from then on, for good, as a vanished host or a lost route does
   * (the client learns nothing until a timeout of its own fires).
   */
  cut(mode?: "reset" | "silence"): Promise<void>;
  /** Listens on the same port again (retrying while the port is briefly unavailable). */
  restore(): Promise<void>;
  /** Relays new connections to another target from now on (e.g. a database restarted elsewhere). */
  retarget(target: { host: string; port: number }): void;
  close(): Promise<void>;
}

export async function startTcpProxy(initial: { host: string; port: number }): Promise<TcpProxy> {
  let target = initial;
  let accepted = 0;
  const open = new Set<Socket>();
  const onConnection = (client: Socket) => {
    accepted++;
    const upstream = connect(target.port, target.host);
    const pair = [client, upstream];
    for (const s of pair) {
      open.add(s);
      s.on("error", () => {});
      s.on("close", () => {
        open.delete(s);
        for (const o of pair) if (!o.destroyed) o.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const listen = (on: number) =>
    new Promise<Server>((res, rej) => {
      const s = createServer(onConnection);
      s.once("error", rej);
      s.listen(on, "127.0.0.1", () => {
        s.off("error", rej);
        res(s);
      });
    });
  // The listening socket closes at once; close()'s callback would also wait for silenced connections.
  const closeServer = async (s: Server) => {
    s.close();
  };
  // Outside the ephemeral range: cut() closes the port, and restore() must get the same one back.
  let server: Server | null = await listen(await stablePort());
  const port = (server.address() as { port: number }).port;
  const dropAll = () => {
    for (const s of open) s.resetAndDestroy();
    open.clear();
  };
  // Silenced connections: open, read and discarded, never answered; destroyed only by close().
  const silenced = new Set<Socket>();
  const silenceAll = () => {
    for (const s of open) {
      s.unpipe();
      s.removeAllListeners("data");
      s.on("data", () => {});
      s.removeAllListeners("close");
      s.on("close", () => silenced.delete(s));
      silenced.add(s);
    }
    open.clear();
  };
  return {
    port,
    get accepted() {
      return accepted;
    },
    get isCut() {
      return server === null;
    },
    async cut(mode = "reset") {
      const s = server;
      server = null;
      if (mode === "silence") silenceAll();
      else dropAll();
      if (s) await closeServer(s);
    },
    async restore() {
      if (server) return;
      for (let tries = 0; ; tries++) {
        try {
          server = await listen(port);
          return;
        } catch (e) {
          if (tries >= 50) throw e;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
    retarget(t) {
      target = t;
    },
    async close() {
      const s = server;
      server = null;
      dropAll();
      for (const x of silenced) x.destroy();
      silenced.clear();
      if (s) await closeServer(s);
    },
  };
}
