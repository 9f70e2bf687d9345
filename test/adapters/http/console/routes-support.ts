import { expect } from "vitest";
import type { makeConsoleHarness } from "./console-harness.ts";

// What the routes*.test.ts files share: an endpoint made and an event published through the API.

export const HOOK = "http://127.0.0.1:9/hook";

export async function createEndpoint(
  h: Awaited<ReturnType<typeof makeConsoleHarness>>,
  token: string,
  events = ["message.delivered"],
) {
  const res = await h.api(token, "/webhooks", {
    method: "POST",
    body: JSON.stringify({ url: HOOK, events }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; secret: string };
}

export async function publish(h: Awaited<ReturnType<typeof makeConsoleHarness>>, token: string) {
  const res = await h.publish(token);
  expect(res.status).toBe(202);
  return (await res.json()) as { id: string };
}
