import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { afterAll, describe, expect, it } from "vitest";
import { sampleEventData } from "../../../../src/domain/samples.ts";
import { makeApiHarness } from "../../../support/api-harness.ts";
import { apiSuite } from "./api-suite.ts";

// The same suite over a real socket (in-memory store, no delivery engine): catches what app.fetch
// cannot, such as a connection left unusable after an early 413.
describe("API over @hono/node-server", () => {
  let close: (() => void) | undefined;
  afterAll(() => close?.());

  apiSuite(async () => {
    const h = await makeApiHarness();
    const server = serve({ fetch: h.app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise((resolve) => server.once("listening", resolve));
    close = () => server.close();
    const { port } = server.address() as AddressInfo;
    return {
      baseUrl: `http://127.0.0.1:${port}`,
      newToken: (scope) => h.newToken(scope),
      revokeToken: (token) => h.revokeToken(token),
      deliversInBackground: false,
    };
  });
});

describe("request bodies over @hono/node-server without Content-Length", () => {
  let close: (() => void) | undefined;
  afterAll(() => close?.());

  async function start() {
    const h = await makeApiHarness();
    const server = serve({ fetch: h.app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise((resolve) => server.once("listening", resolve));
    close = () => server.close();
    const { port } = server.address() as AddressInfo;
    const { token } = await h.newToken();
    return { port, token };
  }

  /** POSTs the parts as a chunked body (no Content-Length), one write each. */
  function chunked(port: number, token: string, path: string, parts: string[]) {
    return new Promise<{ status: number; body: string; connection: string | undefined }>(
      (resolve, reject) => {
        const req = httpRequest(
          {
            host: "127.0.0.1",
            port,
            path,
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          },
          (res) => {
            let body = "";
            res.setEncoding("utf8");
            res.on("data", (c: string) => {
              body += c;
            });
            res.on("end", () =>
              resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }),
            );
          },
        );
        req.on("error", (e: NodeJS.ErrnoException) => {
          // The server may close before every chunk is written; the answer has arrived by then.
          if (e.code !== "EPIPE" && e.code !== "ECONNRESET") reject(e);
        });
        for (const p of parts) req.write(p);
        req.end();
      },
    );
  }

  it("reads a chunked body in pieces, and answers 413 and closes once it passes 256 KiB", async () => {
    const { port, token } = await start();
    const event = JSON.stringify({
      type: "message.sent",
      data: sampleEventData(
        "message.sent",
        { subjectId: "6f1c2b9e-8a44-4c1e-9a53-0000000000aa" },
        new Date(),
      ),
    });
    const ok = await chunked(port, token, "/api/v1/events", [event.slice(0, 10), event.slice(10)]);
    expect(ok.status).toBe(202);
    expect(JSON.parse(ok.body)).toMatchObject({ type: "message.sent" });

    const big = `{"type":"message.sent","data":{"reason":"${"y".repeat(64 * 1024)}`;
    const tooLarge = await chunked(port, token, "/api/v1/events", [big, big, big, big, big, '"}}']);
    expect(tooLarge.status).toBe(413);
    expect(JSON.parse(tooLarge.body)).toMatchObject({ code: "payload_too_large" });
    expect(tooLarge.connection).toBe("close");

    const bad = await chunked(port, token, "/api/v1/events", ['{"type":', "nope"]);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toMatchObject({ code: "invalid_json" });
  });
});
