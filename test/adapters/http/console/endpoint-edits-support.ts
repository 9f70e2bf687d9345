import { expect } from "vitest";
import type { makeConsoleHarness } from "./console-harness.ts";

// What endpoint-edits, endpoint-filter and endpoint-scheme.test.ts share: an endpoint made and read through the API.

export const HOOK = "http://127.0.0.1:9/hook";

export type Harness = Awaited<ReturnType<typeof makeConsoleHarness>>;

export interface WebhookJson {
  id: string;
  secret: string;
  headers: Record<string, string>;
  filter: unknown;
  signature_scheme: string;
  public_key: string | null;
}

export async function createEndpoint(h: Harness, token: string, body: Record<string, unknown> = {}) {
  const res = await h.api(token, "/webhooks", {
    method: "POST",
    body: JSON.stringify({ url: HOOK, events: ["message.delivered", "message.bounced"], ...body }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as WebhookJson;
}

export async function webhook(h: Harness, token: string, id: string): Promise<WebhookJson> {
  return (await (await h.api(token, `/webhooks/${id}`)).json()) as WebhookJson;
}
