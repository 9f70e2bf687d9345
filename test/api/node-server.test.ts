import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { afterAll, describe } from "vitest";
import { makeApiHarness } from "../support/api-harness.ts";
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
