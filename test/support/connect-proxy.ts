import { connect, createServer, type Socket } from "node:net";

/**
 * A real HTTP CONNECT proxy on 127.0.0.1 (random port) for tests of deliveries through an egress
 * proxy. It records every request head it is sent (method, target, headers), and tunnels a CONNECT
 * it accepts to the host and port asked for, byte for byte, so TLS runs end to end through it.
 *
 *   const proxy = await startConnectProxy({ credentials: "herald:s3cret" });
 *   ... HERALD_DELIVERY_PROXY=http://herald:s3cret@127.0.0.1:${proxy.port} ...
 *   expect(proxy.requests[0]?.target).toBe(`127.0.0.1:${rx.port}`);
 *   await proxy.close();
 *
 * `answer` scripts refusals: a status (403, 407, 502, ...) to answer instead of tunnelling, or "hang"
 * to never answer. A request whose Proxy-Authorization does not match `credentials` gets 407.
 * Anything but CONNECT gets 405: this proxy forwards nothing itself.
 */
export interface ProxyRequest {
  method: string;
  /** The request target: `203.0.113.5:443` for a CONNECT. */
  target: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The status the proxy answered (200 for a tunnel), or null when it never answered. */
  status: number | null;
}

export interface ConnectProxy {
  port: number;
  /** `http://127.0.0.1:<port>` (no credentials). */
  url: string;
  /** Every request head, in order of arrival (live array). */
  readonly requests: readonly ProxyRequest[];
  /** TCP connections accepted so far, including ones that never sent a request. */
  readonly connections: number;
  /** Bytes relayed through tunnels, both ways. */
  readonly tunnelledBytes: number;
  setAnswer(answer: ProxyAnswer): void;
  close(): Promise<void>;
}

export type ProxyAnswer = "tunnel" | "hang" | number | ((req: ProxyRequest) => "tunnel" | "hang" | number);

export async function startConnectProxy(
  options: { credentials?: string; answer?: ProxyAnswer } = {},
): Promise<ConnectProxy> {
  const requests: ProxyRequest[] = [];
  const open = new Set<Socket>();
  let answer: ProxyAnswer = options.answer ?? "tunnel";
  let connections = 0;
  let tunnelledBytes = 0;
  const expected =
    options.credentials === undefined ? null : `Basic ${Buffer.from(options.credentials).toString("base64")}`;

  const track = (s: Socket) => {
    open.add(s);
    s.on("error", () => {});
    s.on("close", () => open.delete(s));
  };

  const server = createServer((client) => {
    connections++;
    track(client);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end === -1) return;
      client.off("data", onData);
      client.pause();
      const [requestLine = "", ...lines] = head.subarray(0, end).toString("latin1").split("\r\n");
      const [method = "", target = ""] = requestLine.split(" ");
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(":");
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const req: ProxyRequest = { method, target, headers, status: null };
      requests.push(req);
      const respond = (status: number, reason: string) => {
        req.status = status;
        client.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      };
      if (method !== "CONNECT") return respond(405, "Method Not Allowed");
      if (expected !== null && headers["proxy-authorization"] !== expected)
        return respond(407, "Proxy Authentication Required");
      const decision = typeof answer === "function" ? answer(req) : answer;
      if (decision === "hang") return;
      if (typeof decision === "number") return respond(decision, "Refused By Test");
      const colon = target.lastIndexOf(":");
      const host = target.slice(0, colon).replace(/^\[|\]$/g, "");
      const upstream = connect(Number(target.slice(colon + 1)), host);
      track(upstream);
      upstream.once("error", () => {
        if (req.status === null) respond(502, "Bad Gateway");
        else client.destroy();
      });
      upstream.once("connect", () => {
        req.status = 200;
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        const rest = head.subarray(end + 4);
        if (rest.length > 0) upstream.write(rest);
        client.on("data", (c: Buffer) => {
          tunnelledBytes += c.length;
        });
        upstream.on("data", (c: Buffer) => {
          tunnelledBytes += c.length;
        });
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
        client.once("close", () => upstream.destroy());
        upstream.once("close", () => client.destroy());
      });
    };
    client.on("data", onData);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    get connections() {
      return connections;
    },
    get tunnelledBytes() {
      return tunnelledBytes;
    },
    setAnswer(a) {
      answer = a;
    },
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
