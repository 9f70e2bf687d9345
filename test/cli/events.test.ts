import { describe, expect, it } from "vitest";
import type { PublishedEvent, WebhookWithSecret } from "../../clients/typescript/client.ts";
import { unwrap } from "../../clients/typescript/client.ts";
import { EVENT_TYPES, resourceIdField } from "../../src/domain/event-catalog.ts";
import { cliHarness, receiverUrl } from "./helpers.ts";

describe("herald events", () => {
  it("send publishes valid sample data for every type of the catalog", async () => {
    const cli = await cliHarness();
    for (const type of EVENT_TYPES) {
      const run = await cli.run(["events", "send", type, "--json"]);
      expect(run.code, `${type}: ${run.err.join(" ")}`).toBe(0);
      const e = run.json<PublishedEvent>();
      expect(e.type).toBe(type);
      expect(e.resource_id).toBe(e.data[resourceIdField(type)]);
      expect(e.data.status).toBeTypeOf("string");
    }
  });

  it("send prints the event and how many endpoints it reached", async () => {
    const cli = await cliHarness();
    await cli.run(["webhooks", "create", "--url", receiverUrl(), "--events", "message.delivered"]);
    const run = await cli.run(["events", "send", "message.delivered"]);
    expect(run.code).toBe(0);
    expect(run.out[0]).toMatch(/^Published message\.delivered (evt_[0-9a-f]{32}) to 1 endpoint\.$/);
    const id = /evt_[0-9a-f]{32}/.exec(run.out[0]!)![0];
    const stored = await unwrap(cli.client.GET("/api/v1/events/{id}", { params: { path: { id } } }));
    expect(run.stdout).toMatch(new RegExp(`^resource +${stored.resource_id}$`, "m"));
    expect(run.stdout).toContain('"recipient": "ada.lovelace@example.com"');
    expect(run.stdout).toMatch(/^occurred +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(\d+s ago\)$/m);
  });

  it("send merges --data over the sample and takes --resource-id as the subject", async () => {
    const cli = await cliHarness();
    const id = crypto.randomUUID();
    const run = await cli.run([
      "events",
      "send",
      "message.bounced",
      "--data",
      '{"recipient":"bob@example.com","metadata":{"order":42}}',
      "--resource-id",
      id,
      "--occurred-at",
      "2026-11-21T10:00:00+01:00",
      "--json",
    ]);
    expect(run.code).toBe(0);
    const e = run.json<PublishedEvent>();
    expect(e).toMatchObject({ resource_id: id, occurred_at: "2026-11-21T09:00:00.000Z" });
    expect(e.data).toMatchObject({
      message_id: id,
      status: "bounced",
      channel: "email",
      recipient: "bob@example.com",
      metadata: { order: 42 },
    });
    expect(e.data.reason).toContain("550");
  });

  it("send shows the API's validation errors for bad --data on one line", async () => {
    const cli = await cliHarness();
    const run = await cli.run(["events", "send", "message.sent", "--data", '{"channel":"fax"}']);
    expect(run.code).toBe(1);
    expect(run.out).toEqual([]);
    expect(run.err).toHaveLength(1);
    expect(run.err[0]).toMatch(/^herald: 422 validation_failed: .*\(body\.data\.channel: /);
  });

  it("send rejects an unknown type locally with the list of types", async () => {
    const cli = await cliHarness();
    const run = await cli.run(
      ["events", "send", "message.delivred"],
      {},
      { fetch: () => Promise.reject(new Error("no call expected")) },
    );
    expect(run.code).toBe(2);
    expect(run.err).toHaveLength(1);
    expect(run.err[0]).toContain('unknown event type "message.delivred" (did you mean message.delivered?)');
    for (const t of EVENT_TYPES) expect(run.err[0]).toContain(t);
    for (const data of ["{nope", "[1,2]", '"text"']) {
      const bad = await cli.run(["events", "send", "message.sent", "--data", data]);
      expect(bad.code, data).toBe(2);
      expect(bad.err[0]).toMatch(/^herald: --data (is not JSON|must be a JSON object)/);
    }
    const none = await cli.run(["events", "send"]);
    expect(none.code).toBe(2);
    expect(none.err).toEqual([
      "herald: npx herald events send needs <type>; see npx herald events send --help",
    ]);
  });

  it("send --idempotency-key returns the first answer on a repeat", async () => {
    const cli = await cliHarness();
    const w = (
      await cli.run(["webhooks", "create", "--url", receiverUrl(), "--events", "domain.verified", "--json"])
    ).json<WebhookWithSecret>();
    const args = [
      "events",
      "send",
      "domain.verified",
      "--idempotency-key",
      `dns-check-${crypto.randomUUID()}`,
    ];
    const first = await cli.run([...args, "--json"]);
    const again = await cli.run(args);
    const id = first.json<PublishedEvent>().id;
    expect(again.out[0]).toBe(`Already published with this idempotency key: ${id} (no second fan-out).`);
    const { data } = await unwrap(
      cli.client.GET("/api/v1/webhooks/{id}/deliveries", { params: { path: { id: w.id } } }),
    );
    expect(data).toHaveLength(1);
    // The sample's dated fields stay equal too, so a repeat is a replay rather than a 409.
    const dated = ["events", "send", "domain.verification_failed", "--idempotency-key", "dated"];
    expect((await cli.run(dated)).out[0]).toMatch(/^Published /);
    expect((await cli.run(dated)).out[0]).toMatch(/^Already published /);
    const other = await cli.run([
      "events",
      "send",
      "domain.verified",
      "--idempotency-key",
      "another",
      "--json",
    ]);
    expect(other.json<PublishedEvent>().id).not.toBe(id);
    expect(other.json<PublishedEvent>().resource_id).not.toBe(first.json<PublishedEvent>().resource_id);
  });

  it("get prints the envelope; --json is the API's answer; unknown is one 404 line", async () => {
    const cli = await cliHarness();
    const { endpoints, ...sent } = (
      await cli.run(["events", "send", "domain.sending_paused", "--json"])
    ).json<PublishedEvent>();
    expect(endpoints).toBe(0);
    const run = await cli.run(["events", "get", sent.id]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^id +${sent.id}$`, "m"));
    expect(run.stdout).toMatch(/^type +domain\.sending_paused$/m);
    expect(run.stdout).toContain('"domain": "mail.example.com"');
    const json = await cli.run(["events", "get", sent.id, "--json"]);
    expect(json.json()).toEqual(sent);
    const missing = await cli.run(["events", "get", `evt_${"0".repeat(32)}`]);
    expect(missing.code).toBe(1);
    expect(missing.err).toEqual(["herald: 404 not_found: The event was not found."]);
  });

  it("types lists the catalog without a server", async () => {
    const cli = await cliHarness();
    const run = await cli.run(["events", "types"], { HERALD_TOKEN: undefined });
    expect(run.code).toBe(0);
    expect(run.out).toHaveLength(EVENT_TYPES.length);
    expect(run.out[0]).toMatch(/^message\.accepted +The provider took the message\.$/);
    expect((await cli.run(["events", "types", "--json"])).json()).toEqual([...EVENT_TYPES]);
  });
});
