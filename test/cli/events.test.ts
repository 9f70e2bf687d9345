import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { PublishedEvent, WebhookWithSecret } from "../../clients/typescript/client.ts";
import { unwrap } from "../../clients/typescript/client.ts";
import type { MemoryEvents } from "../../src/adapters/memory/events.ts";
import type { LineResult } from "../../src/cli/events-file.ts";
import {
  EVENT_TYPES,
  OPERATIONAL_EVENT_TYPES,
  PUBLISHED_EVENT_TYPES,
  resourceIdField,
} from "../../src/domain/event-catalog.ts";
import { type CliHarness, cliHarness, receiverUrl } from "./helpers.ts";

describe("herald events", () => {
  it("send publishes valid sample data for every published type of the catalog, and refuses the operational ones", async () => {
    const cli = await cliHarness();
    for (const type of OPERATIONAL_EVENT_TYPES) {
      const run = await cli.run(["events", "send", type]);
      expect(run.code, type).not.toBe(0);
      expect(run.err.join(" ")).toContain(`body.type: type is an operational event type: "${type}"`);
    }
    for (const type of PUBLISHED_EVENT_TYPES) {
      const run = await cli.run(["events", "send", type, "--json"]);
      expect(run.code, `${type}: ${run.err.join(" ")}`).toBe(0);
      const e = run.json<PublishedEvent>();
      expect(e.type).toBe(type);
      expect(e.resource_id).toBe((e.data as Record<string, unknown>)[resourceIdField(type)]);
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

/** How many events the harness's memory store holds. */
const storedEvents = (cli: CliHarness) => (cli.api.repos.events as MemoryEvents).rows.size;

describe("herald events send --file", () => {
  const dir = mkdtempSync(join(tmpdir(), "herald-events-file-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  const file = (lines: string[]) => {
    const path = join(dir, `events-${++files}.jsonl`);
    writeFileSync(path, `${lines.join("\n")}\n`);
    return path;
  };
  const event = (extra: Record<string, unknown> = {}, data: Record<string, unknown> = {}) =>
    JSON.stringify({
      type: "message.sent",
      data: {
        message_id: crypto.randomUUID(),
        status: "sent",
        channel: "sms",
        message_type: "marketing",
        recipient: "+15550100",
        ...data,
      },
      ...extra,
    });

  /** The harness's fetch, counting the batch requests and their sizes; `answer` may replace one. */
  function countingFetch(cli: CliHarness, answer?: (n: number) => Response | null) {
    const batches: { events: number; bytes: number }[] = [];
    const fetch = async (request: Request) => {
      if (new URL(request.url).pathname === "/api/v1/events/batch") {
        const body = await request.clone().text();
        batches.push({
          events: (JSON.parse(body) as { events: unknown[] }).events.length,
          bytes: body.length,
        });
        const replaced = answer?.(batches.length);
        if (replaced) return replaced;
      }
      return cli.api.fetch(request);
    };
    return { batches, deps: { fetch } };
  }

  it("publishes every line in batches of 100 and prints one summary line", async () => {
    const cli = await cliHarness();
    const w = (
      await cli.run(["webhooks", "create", "--url", receiverUrl(), "--events", "message.sent", "--json"])
    ).json<WebhookWithSecret>();
    const path = file(Array.from({ length: 250 }, () => event()));
    const { batches, deps } = countingFetch(cli);
    const run = await cli.run(["events", "send", "--file", path], {}, deps);
    expect(run.err).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.out).toEqual([`Published 250 of 250 events from ${path}.`]);
    expect(batches.map((b) => b.events)).toEqual([100, 100, 50]);
    const deliveries = await unwrap(
      cli.client.GET("/api/v1/webhooks/{id}/deliveries", {
        params: { path: { id: w.id }, query: { limit: 100 } },
      }),
    );
    expect(deliveries.data).toHaveLength(100);
    expect(deliveries.next_cursor).not.toBeNull();
    expect(storedEvents(cli)).toBe(250);
  });

  it("prints each failed line with its number, publishes the rest, and exits 1", async () => {
    const cli = await cliHarness();
    const key = `order-${crypto.randomUUID()}`;
    const path = file([
      event(),
      "",
      "{not json",
      "[1, 2]",
      event({}, { channel: "fax" }),
      event({ idempotency_key: key }),
      event({ idempotency_key: key }), // the same key with another body
      event({ colour: "blue" }),
    ]);
    const run = await cli.run(["events", "send", "--file", path]);
    expect(run.code).toBe(1);
    expect(run.out).toEqual([`Published 2 of 7 events from ${path}; 5 failed.`]);
    expect(run.err).toHaveLength(5);
    expect(run.err[0]).toMatch(/^line 3: not JSON \(/);
    expect(run.err[1]).toBe('line 4: must be a JSON object like {"type": "message.sent", "data": {...}}');
    expect(run.err[2]).toMatch(/^line 5: 422 validation_failed: .*\(data\.channel: /);
    expect(run.err[3]).toMatch(/^line 7: 409 conflict: .*Idempotency-Key/);
    expect(run.err[4]).toMatch(/^line 8: 422 validation_failed: .*\(colour: /);

    // Again: the keyed line is a replay, the others are published anew or fail the same way.
    const again = await cli.run(["events", "send", "--file", path, "--json"]);
    expect(again.code).toBe(1);
    const report = again.json<{
      published: number;
      replayed: number;
      failed: number;
      results: LineResult[];
    }>();
    expect(report).toMatchObject({ published: 2, replayed: 1, failed: 5 });
    expect(report.results.map((r) => [r.line, r.status])).toEqual([
      [1, 202],
      [3, null],
      [4, null],
      [5, 422],
      [6, 202],
      [7, 409],
      [8, 422],
    ]);
    const keyed = report.results.find((r) => r.line === 6);
    expect(keyed).toMatchObject({ replayed: true, event: { type: "message.sent" } });
  });

  it("keeps every batch under the API's body limit when the events are large", async () => {
    const cli = await cliHarness();
    const path = file(Array.from({ length: 60 }, () => event({}, { metadata: { note: "x".repeat(8000) } })));
    const { batches, deps } = countingFetch(cli);
    const run = await cli.run(["events", "send", "--file", path], {}, deps);
    expect(run.code).toBe(0);
    expect(run.out).toEqual([`Published 60 of 60 events from ${path}.`]);
    expect(batches.length).toBeGreaterThan(1);
    for (const b of batches) expect(b.bytes).toBeLessThanOrEqual(256 * 1024);
    expect(batches.reduce((n, b) => n + b.events, 0)).toBe(60);
  });

  it("fails the lines of a batch the API refused whole, and goes on with the next batch", async () => {
    const cli = await cliHarness();
    const path = file(Array.from({ length: 150 }, () => event()));
    const limited = () =>
      new Response(
        JSON.stringify({
          type: "https://herald.dev/problems/rate_limited",
          title: "Too Many Requests",
          status: 429,
          detail: "This token has made more than 2000 publishing requests in a burst; retry in 1 s.",
          code: "rate_limited",
          request_id: "req-1",
        }),
        { status: 429, headers: { "Content-Type": "application/problem+json", "Retry-After": "1" } },
      );
    const { deps } = countingFetch(cli, (n) => (n === 1 ? limited() : null));
    const run = await cli.run(["events", "send", "--file", path], {}, deps);
    expect(run.code).toBe(1);
    expect(run.out).toEqual([`Published 50 of 150 events from ${path}; 100 failed.`]);
    expect(run.err).toHaveLength(100);
    expect(run.err[0]).toMatch(/^line 1: 429 rate_limited: /);
    expect(run.err[99]).toMatch(/^line 100: 429 rate_limited: /);
    expect(storedEvents(cli)).toBe(50);
  });

  it("refuses a missing or empty file, a type beside --file, and one-event options, before sending", async () => {
    const cli = await cliHarness();
    const noCall = { fetch: () => Promise.reject(new Error("no call expected")) };
    const empty = file(["", "  "]);
    const cases: [string[], RegExp][] = [
      [["--file", join(dir, "missing.jsonl")], /^herald: cannot read --file .*missing\.jsonl: /],
      [["--file", empty], /holds no events \(one JSON object per line\)/],
      [["message.sent", "--file", empty], /unexpected argument "message\.sent"/],
      [["--file", empty, "--data", "{}"], /--data is for one event; with --file, put it in the file's lines/],
    ];
    for (const [args, message] of cases) {
      const run = await cli.run(["events", "send", ...args], {}, noCall);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.err).toHaveLength(1);
      expect(run.err[0]).toMatch(message);
    }
    const bad = await cli.run(["events", "send", "--file", file(["{nope"])], {}, noCall);
    expect(bad.code).toBe(1);
    expect(bad.err).toEqual([expect.stringMatching(/^line 1: not JSON/)]);
  });
});
