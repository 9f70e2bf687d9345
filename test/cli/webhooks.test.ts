import { describe, expect, it } from "vitest";
import type { Webhook } from "../../clients/typescript/client.ts";
import { unwrap } from "../../clients/typescript/client.ts";
import { cliHarness, receiverUrl } from "./helpers.ts";
import { created, getWebhook, SECRET } from "./webhooks-support.ts";

// `herald webhooks` create, list, get, update, enable and delete: an endpoint's life through the CLI.

describe("herald webhooks", () => {
  it("create prints the endpoint and its secret once, with a warning", async () => {
    const cli = await cliHarness();
    const url = receiverUrl();
    const run = await cli.run([
      "webhooks",
      "create",
      "--url",
      url,
      "--events",
      "message.delivered,message.bounced",
      "--events",
      "domain.verified",
      "--description",
      "orders service",
    ]);
    expect(run.code).toBe(0);
    expect(run.err).toEqual([]);
    const { data } = await unwrap(cli.client.GET("/api/v1/webhooks"));
    expect(data).toHaveLength(1);
    const w = data[0]!;
    expect(w).toMatchObject({
      url,
      events: ["message.delivered", "message.bounced", "domain.verified"],
      description: "orders service",
    });
    expect(run.stdout).toContain(`Created endpoint ${w.id}`);
    expect(run.stdout).toMatch(new RegExp(`^url +${url}$`, "m"));
    expect(run.stdout).toMatch(/^events +message\.delivered, message\.bounced, domain\.verified$/m);
    expect(run.stdout).toMatch(/^state +enabled$/m);
    expect(run.stdout).toMatch(/^created +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(\d+s ago\)$/m);
    expect(run.stdout.match(new RegExp(SECRET, "g"))).toHaveLength(1);
    expect(run.stdout).toContain("will not be shown again");
  });

  it("create --json prints exactly the API's answer, secret included", async () => {
    const cli = await cliHarness();
    const w = await created(cli, "message.sent");
    expect(w.secret).toMatch(SECRET);
    const { secret, ...rest } = w;
    expect(await getWebhook(cli, w.id)).toEqual(rest);
  });

  it("create without --url or --events is a usage error (exit 2)", async () => {
    const cli = await cliHarness();
    const run = await cli.run(["webhooks", "create", "--url", receiverUrl()]);
    expect(run.code).toBe(2);
    expect(run.err).toEqual([
      "herald: --url and --events are required; see npx herald webhooks create --help",
    ]);
    expect(run.out).toEqual([]);
  });

  it("create shows the API's validation errors on one line, exit 1", async () => {
    const cli = await cliHarness();
    const run = await cli.run([
      "webhooks",
      "create",
      "--url",
      receiverUrl(),
      "--events",
      "message.lost,message.delivered",
      "--description",
      "x".repeat(1100),
    ]);
    expect(run.code).toBe(1);
    expect(run.out).toEqual([]);
    expect(run.err).toHaveLength(1);
    expect(run.err[0]).toMatch(/^herald: 422 validation_failed: The request is not valid\. \(.+\)$/);
    expect(run.err[0]).toContain(
      'body.events.0: events.0 is not an event type of the catalog: "message.lost"; ',
    );
    expect(run.err[0]).toContain("body.description: ");
  });

  it("list prints a table newest first; --json is the API's page", async () => {
    const cli = await cliHarness();
    const a = await created(cli);
    const b = await created(cli, "message.sent,message.bounced");
    const run = await cli.run(["webhooks", "list"]);
    expect(run.code).toBe(0);
    expect(run.out[0]).toMatch(/^ID +URL +EVENTS +STATE +CREATED \(UTC\)$/);
    expect(run.out[1]).toMatch(
      new RegExp(`^${b.id} +${b.url} +message\\.sent,message\\.bounced +enabled +\\d{4}-`),
    );
    expect(run.out[2]).toContain(a.id);
    expect(run.out).toHaveLength(3);
    const json = await cli.run(["webhooks", "list", "--json"]);
    expect(json.json()).toEqual(await unwrap(cli.client.GET("/api/v1/webhooks")));
  });

  it("list filters by state and event type", async () => {
    const cli = await cliHarness();
    const a = await created(cli, "message.delivered");
    const b = await created(cli, "message.sent");
    expect((await cli.run(["webhooks", "update", b.id, "--disable"])).code).toBe(0);
    const ids = async (...flags: string[]) =>
      (await cli.run(["webhooks", "list", "--json", ...flags]))
        .json<{ data: Webhook[] }>()
        .data.map((w) => w.id);
    expect(await ids("--enabled")).toEqual([a.id]);
    expect(await ids("--disabled")).toEqual([b.id]);
    expect(await ids("--event", "message.sent")).toEqual([b.id]);
    const human = await cli.run(["webhooks", "list", "--disabled"]);
    expect(human.stdout).toContain("disabled (manual)");
    const both = await cli.run(["webhooks", "list", "--enabled", "--disabled"]);
    expect(both.code).toBe(2);
    expect(both.err).toHaveLength(1);
  });

  it("list pages with --limit/--cursor and walks every page with --all", async () => {
    const cli = await cliHarness();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await created(cli)).id);
    const first = await cli.run(["webhooks", "list", "--limit", "2"]);
    expect(first.out.filter((l) => /^[0-9a-f]{8}-/.test(l))).toHaveLength(2);
    const hint = first.out.at(-1)!;
    expect(hint).toMatch(/^More: npx herald webhooks list --cursor \S+ \(or --all\)$/);
    const cursor = hint.split(" ")[6]!;
    const second = await cli.run(["webhooks", "list", "--cursor", cursor, "--limit", "2", "--json"]);
    expect(second.json<{ data: Webhook[] }>().data.map((w) => w.id)).toEqual([ids[0]]);
    const all = await cli.run(["webhooks", "list", "--all", "--limit", "1", "--json"]);
    expect(all.json()).toMatchObject({ next_cursor: null });
    expect(all.json<{ data: Webhook[] }>().data.map((w) => w.id)).toEqual([...ids].reverse());
    const bad = await cli.run(["webhooks", "list", "--limit", "500"]);
    expect(bad.code).toBe(2);
    expect(bad.err[0]).toContain("--limit must be a whole number from 1 to 100");
  });

  it("get prints one endpoint; --json matches the API", async () => {
    const cli = await cliHarness();
    const w = await created(cli, "domain.verified");
    const run = await cli.run(["webhooks", "get", w.id]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^id +${w.id}$`, "m"));
    expect(run.stdout).toMatch(/^events +domain\.verified$/m);
    expect(run.stdout).toMatch(/^description +-$/m);
    expect(run.stdout).not.toContain("whsec_");
    const json = await cli.run(["webhooks", "get", w.id, "--json"]);
    expect(json.json()).toEqual(await getWebhook(cli, w.id));
  });

  it("update changes fields, disables and enables", async () => {
    const cli = await cliHarness();
    const w = await created(cli);
    const url = receiverUrl();
    const run = await cli.run([
      "webhooks",
      "update",
      w.id,
      "--url",
      url,
      "--events",
      "message.sent",
      "--description",
      "new",
      "--disable",
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Updated endpoint ${w.id}`);
    expect(run.stdout).toMatch(/^state +disabled \(manual\)$/m);
    expect(await getWebhook(cli, w.id)).toMatchObject({
      url,
      events: ["message.sent"],
      description: "new",
      enabled: false,
    });
    const json = await cli.run(["webhooks", "update", w.id, "--enable", "--description", "", "--json"]);
    expect(json.json()).toEqual(await getWebhook(cli, w.id));
    expect(json.json()).toMatchObject({ enabled: true, description: null, disabled_reason: null });
    for (const args of [[], ["--enable", "--disable"]]) {
      const bad = await cli.run(["webhooks", "update", w.id, ...args]);
      expect(bad.code).toBe(2);
      expect(bad.err).toHaveLength(1);
    }
  });

  it("enable re-enables a disabled endpoint", async () => {
    const cli = await cliHarness();
    const w = await created(cli);
    await cli.run(["webhooks", "update", w.id, "--disable"]);
    const run = await cli.run(["webhooks", "enable", w.id]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Enabled endpoint ${w.id}`);
    expect(run.stdout).toMatch(/^state +enabled$/m);
    expect((await getWebhook(cli, w.id)).enabled).toBe(true);
  });

  it("delete asks nothing and says what it did; afterwards the id answers 404 on one line", async () => {
    const cli = await cliHarness();
    const w = await created(cli);
    const run = await cli.run(["webhooks", "delete", w.id]);
    expect(run.code).toBe(0);
    expect(run.out).toEqual([`Deleted endpoint ${w.id}; its pending deliveries were cancelled.`]);
    const gone = await cli.run(["webhooks", "get", w.id]);
    expect(gone.code).toBe(1);
    expect(gone.out).toEqual([]);
    expect(gone.err).toEqual(["herald: 404 not_found: The endpoint was not found."]);
    const other = await created(cli);
    const json = await cli.run(["webhooks", "delete", other.id, "--json"]);
    expect(json.json()).toEqual({ id: other.id, deleted: true });
  });
});
