import { expect } from "vitest";
import type { WebhookWithSecret } from "../../clients/typescript/client.ts";
import { unwrap } from "../../clients/typescript/client.ts";
import { type CliHarness, receiverUrl } from "./helpers.ts";

// What the webhooks*.test.ts files on `herald webhooks` share: an endpoint created through the CLI, read through the API.

export const SECRET = /whsec_[A-Za-z0-9+/]{43}=/;

export async function created(cli: CliHarness, events = "message.delivered") {
  const run = await cli.run(["webhooks", "create", "--url", receiverUrl(), "--events", events, "--json"]);
  expect(run.code).toBe(0);
  return run.json<WebhookWithSecret>();
}

export const getWebhook = (cli: CliHarness, id: string) =>
  unwrap(cli.client.GET("/api/v1/webhooks/{id}", { params: { path: { id } } }));
