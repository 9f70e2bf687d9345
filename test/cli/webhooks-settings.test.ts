import { describe, expect, it } from "vitest";
import type { Webhook } from "../../clients/typescript/client.ts";
import { unwrap } from "../../clients/typescript/client.ts";
import { cliHarness, receiverUrl } from "./helpers.ts";
import { created, getWebhook } from "./webhooks-support.ts";

// `herald webhooks` delivery settings: --rate-limit, --ordering, --filter, and filter-test.

describe("herald webhooks", () => {
  it("create --rate-limit 5/s and update --rate-limit 300/m or none; a malformed limit is a usage error", async () => {
    const cli = await cliHarness();
    const run = await cli.run([
      "webhooks",
      "create",
      "--url",
      receiverUrl(),
      "--events",
      "message.delivered",
      "--rate-limit",
      "5/s",
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^rate limit +5\/s$/m);
    const [w] = (await unwrap(cli.client.GET("/api/v1/webhooks"))).data;
    expect(w?.rate_limit).toEqual({ per_second: 5 });
    const perMinute = await cli.run(["webhooks", "update", w!.id, "--rate-limit", "300/m"]);
    expect(perMinute.code).toBe(0);
    expect(perMinute.stdout).toMatch(/^rate limit +300\/m$/m);
    expect((await getWebhook(cli, w!.id)).rate_limit).toEqual({ per_minute: 300 });
    const none = await cli.run(["webhooks", "update", w!.id, "--rate-limit", "none", "--json"]);
    expect(none.json()).toMatchObject({ rate_limit: null });
    expect((await cli.run(["webhooks", "get", w!.id])).stdout).toMatch(/^rate limit +none$/m);
    for (const bad of ["5", "5/h", "0/s", "1001/s", "60001/m", "none"]) {
      const refused = await cli.run([
        "webhooks",
        "create",
        "--url",
        receiverUrl(),
        "--events",
        "message.sent",
        "--rate-limit",
        bad,
      ]);
      expect(refused.code).toBe(2);
      expect(refused.err).toEqual([
        `herald: --rate-limit must be N/s (1-1000) or N/m (1-60000), not "${bad}"; see npx herald webhooks create --help`,
      ]);
    }
    const badUpdate = await cli.run(["webhooks", "update", w!.id, "--rate-limit", "fast"]);
    expect(badUpdate.code).toBe(2);
    expect(badUpdate.err[0]).toContain("--rate-limit must be N/s (1-1000) or N/m (1-60000) or none");
    expect((await unwrap(cli.client.GET("/api/v1/webhooks"))).data).toHaveLength(1);
  });

  it("create --ordering fifo and update --ordering none; get shows the ordering and what it holds", async () => {
    const cli = await cliHarness();
    const run = await cli.run([
      "webhooks",
      "create",
      "--url",
      receiverUrl(),
      "--events",
      "message.delivered",
      "--ordering",
      "fifo",
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ordering +fifo \(0 held\)$/m);
    const [w] = (await unwrap(cli.client.GET("/api/v1/webhooks"))).data;
    expect(w).toMatchObject({ ordering: "fifo", held: 0 });
    const none = await cli.run(["webhooks", "update", w!.id, "--ordering", "none"]);
    expect(none.code).toBe(0);
    expect(none.stdout).toMatch(/^ordering +none$/m);
    expect((await getWebhook(cli, w!.id)).ordering).toBe("none");
    const bad = await cli.run(["webhooks", "update", w!.id, "--ordering", "lifo"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toEqual([
      'herald: --ordering must be fifo or none, not "lifo"; see npx herald webhooks update --help',
    ]);
  });

  it("create and update take --filter; update --filter null removes it; get shows it", async () => {
    const cli = await cliHarness();
    const filter = { "data.channel": "email", "data.message_type": { $ne: "marketing" } };
    const run = await cli.run([
      "webhooks",
      "create",
      "--url",
      receiverUrl(),
      "--events",
      "message.bounced",
      "--filter",
      JSON.stringify(filter),
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^filter +\{"data\.channel":"email","data\.message_type":\{"\$ne":"marketing"\}\}$/m,
    );
    const { data } = await unwrap(cli.client.GET("/api/v1/webhooks"));
    const id = data[0]!.id;
    expect(data[0]!.filter).toEqual(filter);

    const replaced = await cli.run([
      "webhooks",
      "update",
      id,
      "--filter",
      '{"type":"message.bounced"}',
      "--json",
    ]);
    expect(replaced.code).toBe(0);
    expect(replaced.json<Webhook>().filter).toEqual({ type: "message.bounced" });
    const kept = await cli.run(["webhooks", "update", id, "--description", "kept", "--json"]);
    expect(kept.json<Webhook>().filter).toEqual({ type: "message.bounced" });
    const removed = await cli.run(["webhooks", "update", id, "--filter", "null"]);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toMatch(/^filter +none \(every event\)$/m);
    expect((await getWebhook(cli, id)).filter).toBeNull();
    expect((await cli.run(["webhooks", "get", id])).stdout).toMatch(/^filter +none \(every event\)$/m);
  });

  it("--filter must be a JSON object (exit 2); the API's 422 names the clause's path (exit 1)", async () => {
    const cli = await cliHarness();
    const w = await created(cli);
    const notJson = await cli.run(["webhooks", "update", w.id, "--filter", "{data.channel: email}"]);
    expect(notJson.code).toBe(2);
    expect(notJson.err[0]).toMatch(
      /^herald: --filter must be JSON \(.+\); see npx herald webhooks update --help$/,
    );
    const notObject = await cli.run(["webhooks", "update", w.id, "--filter", '["x"]']);
    expect(notObject.code).toBe(2);
    expect(notObject.err[0]).toMatch(/^herald: --filter must be a JSON object/);
    const refused = await cli.run(["webhooks", "update", w.id, "--filter", '{"data.status":{"$where":"1"}}']);
    expect(refused.code).toBe(1);
    expect(refused.err).toHaveLength(1);
    expect(refused.err[0]).toContain(
      "body.filter.data.status.$where: filter.data.status.$where is not allowed: a filter cannot run code or expressions ($where)",
    );
    expect((await getWebhook(cli, w.id)).filter).toBeNull();
  });

  it("filter-test says whether an event would be delivered, and which clauses failed", async () => {
    const cli = await cliHarness();
    const w = await created(cli);
    await cli.run(["webhooks", "update", w.id, "--filter", '{"data.channel":"sms"}']);
    const event = JSON.stringify({
      type: "message.delivered",
      data: {
        message_id: "6f1c2b9e-8a44-4c1e-9a53-0d5b2f7e1a10",
        status: "delivered",
        channel: "email",
        message_type: "transactional",
        recipient: "ada@example.com",
      },
    });
    const no = await cli.run(["webhooks", "filter-test", w.id, "--event", event]);
    expect(no.code).toBe(0);
    expect(no.out).toEqual([
      `Does not match: endpoint ${w.id} would not get this event.`,
      'filter  {"data.channel":"sms"}',
      '  ✘ filter.data.channel: data.channel is "email"; expected equal to "sms"',
    ]);
    const yes = await cli.run([
      "webhooks",
      "filter-test",
      w.id,
      "--event",
      event,
      "--filter",
      '{"data.channel":"email"}',
    ]);
    expect(yes.out).toEqual([
      `Matches: endpoint ${w.id} would get this event.`,
      'filter  {"data.channel":"email"}',
    ]);
    const json = await cli.run([
      "webhooks",
      "filter-test",
      w.id,
      "--event",
      event,
      "--filter",
      "null",
      "--json",
    ]);
    expect(json.json()).toEqual({ matches: true, subscribed: true, filter: null, reasons: [] });
    // The candidate was not saved.
    expect((await getWebhook(cli, w.id)).filter).toEqual({ "data.channel": "sms" });

    const missing = await cli.run(["webhooks", "filter-test", w.id]);
    expect(missing.code).toBe(2);
    expect(missing.err).toEqual(["herald: --event is required; see npx herald webhooks filter-test --help"]);
    expect((await cli.run(["webhooks", "filter-test", w.id, "--event", "nope"])).code).toBe(2);
    const invalid = await cli.run([
      "webhooks",
      "filter-test",
      w.id,
      "--event",
      '{"type":"message.delivered","data":{}}',
    ]);
    expect(invalid.code).toBe(1);
    expect(invalid.err[0]).toContain("body.event.data.message_id: ");
  });
});
