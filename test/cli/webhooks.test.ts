import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Webhook, WebhookWithSecret } from "../../clients/typescript/client.ts";
import { unwrap } from "../../clients/typescript/client.ts";
import { ENCRYPTED_KEY_PASSPHRASE, testClientTls } from "../support/tls.ts";
import { type CliHarness, cliHarness, receiverUrl } from "./helpers.ts";

const SECRET = /whsec_[A-Za-z0-9+/]{43}=/;

async function created(cli: CliHarness, events = "message.delivered") {
  const run = await cli.run(["webhooks", "create", "--url", receiverUrl(), "--events", events, "--json"]);
  expect(run.code).toBe(0);
  return run.json<WebhookWithSecret>();
}

const getWebhook = (cli: CliHarness, id: string) =>
  unwrap(cli.client.GET("/api/v1/webhooks/{id}", { params: { path: { id } } }));

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

  it("create --header (repeatable) and --signature-scheme; values never printed, masked from then on", async () => {
    const cli = await cliHarness();
    const value = "cli-value-5b2e";
    const run = await cli.run([
      "webhooks",
      "create",
      "--url",
      receiverUrl(),
      "--events",
      "message.delivered",
      "--header",
      `Authorization=Bearer ${value}`,
      "--header",
      "X-Query=a=b",
      "--signature-scheme",
      "standard-webhooks",
    ]);
    expect(run.code).toBe(0);
    expect(run.err).toEqual([]);
    expect(run.stdout).toMatch(/^signature scheme +standard-webhooks$/m);
    expect(run.stdout).toMatch(/^headers +Authorization: \*{8}, X-Query: \*{8}$/m);
    expect(run.stdout).not.toContain(value);
    const [w] = (await unwrap(cli.client.GET("/api/v1/webhooks"))).data;
    expect(w).toMatchObject({
      signature_scheme: "standard-webhooks",
      headers: { Authorization: "********", "X-Query": "********" },
    });
    const json = await cli.run(["webhooks", "get", w!.id, "--json"]);
    expect(json.json()).toEqual(await getWebhook(cli, w!.id));
    expect(json.stdout).not.toContain(value);
    const plain = await cli.run(["webhooks", "create", "--url", receiverUrl(), "--events", "message.sent"]);
    expect(plain.stdout).toMatch(/^signature scheme +herald-v1$/m);
    expect(plain.stdout).toMatch(/^headers +-$/m);
  });

  it("update --header sets, --remove-header removes, others stay; --signature-scheme switches", async () => {
    const cli = await cliHarness();
    const w = await created(cli);
    const set = await cli.run([
      "webhooks",
      "update",
      w.id,
      "--header",
      "X-A=1",
      "--header",
      "X-B=2",
      "--json",
    ]);
    expect(set.code).toBe(0);
    expect(set.json<{ headers: object }>().headers).toEqual({ "X-A": "********", "X-B": "********" });
    const run = await cli.run([
      "webhooks",
      "update",
      w.id,
      "--header",
      "X-C=3",
      "--remove-header",
      "x-a",
      "--signature-scheme",
      "standard-webhooks",
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^headers +X-B: \*{8}, X-C: \*{8}$/m);
    expect(await getWebhook(cli, w.id)).toMatchObject({
      headers: { "X-B": "********", "X-C": "********" },
      signature_scheme: "standard-webhooks",
    });
  });

  it("refuses a malformed --header or --signature-scheme without quoting a value, and shows the API's 422", async () => {
    const cli = await cliHarness();
    const secretish = "do-not-echo-91c";
    for (const args of [
      ["--header", secretish],
      ["--header", `=${secretish}`],
      ["--header", `X-A=${secretish}`, "--header", `X-A=${secretish}`],
      ["--signature-scheme", "herald-v2"],
    ]) {
      const run = await cli.run([
        "webhooks",
        "create",
        "--url",
        receiverUrl(),
        "--events",
        "message.sent",
        ...args,
      ]);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.err).toHaveLength(1);
      expect(run.err.join("\n")).not.toContain(secretish);
    }
    const refused = await cli.run([
      "webhooks",
      "create",
      "--url",
      receiverUrl(),
      "--events",
      "message.sent",
      "--header",
      `Host=${secretish}`,
    ]);
    expect(refused.code).toBe(1);
    expect(refused.err.join("\n")).toContain("body.headers.Host");
    expect(refused.err.join("\n")).not.toContain(secretish);
    const w = await created(cli);
    const both = await cli.run(["webhooks", "update", w.id, "--header", "X-A=1", "--remove-header", "x-a"]);
    expect(both.code).toBe(2);
  });

  it("rotate prints a new secret once; --grace takes a duration", async () => {
    const cli = await cliHarness();
    const w = await created(cli);
    const run = await cli.run(["webhooks", "rotate", w.id, "--grace", "1h"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("keeps signing too until");
    const [secret] = run.stdout.match(SECRET) ?? [];
    expect(secret).toBeDefined();
    expect(secret).not.toBe(w.secret);
    const json = await cli.run(["webhooks", "rotate", w.id, "--json"]);
    const rotated = json.json<WebhookWithSecret>();
    expect(rotated.secret).toMatch(SECRET);
    expect(new Set([w.secret, secret, rotated.secret]).size).toBe(3);
    const tooLong = await cli.run(["webhooks", "rotate", w.id, "--grace", "8d"]);
    expect(tooLong.code).toBe(1);
    expect(tooLong.err).toHaveLength(1);
    expect(tooLong.err[0]).toMatch(/^herald: 422 validation_failed: .*body\.grace_period_seconds: /);
    const bad = await cli.run(["webhooks", "rotate", w.id, "--grace", "soon"]);
    expect(bad.code).toBe(2);
  });

  it("--signature-scheme standard-webhooks-ed25519 prints the public key, never a private key; update across kinds prints the new key", async () => {
    const cli = await cliHarness();
    const PUBLIC = /whpk_[A-Za-z0-9+/]{43}=/;
    const run = await cli.run([
      "webhooks",
      "create",
      "--url",
      receiverUrl(),
      "--events",
      "message.delivered",
      "--signature-scheme",
      "standard-webhooks-ed25519",
    ]);
    expect(run.code).toBe(0);
    const { data } = await unwrap(cli.client.GET("/api/v1/webhooks"));
    const w = data[0]!;
    expect(w.public_key).toMatch(PUBLIC);
    expect(run.stdout).toMatch(new RegExp(`^public key +${w.public_key!.replace(/[+/]/g, "\\$&")}$`, "m"));
    expect(run.stdout).toContain("Public key (receivers verify v1a signatures with it");
    expect(run.stdout).not.toMatch(/whsk_|whsec_|Signing secret/);
    const got = await cli.run(["webhooks", "get", w.id]);
    expect(got.stdout).toContain(w.public_key!);
    const rotated = await cli.run(["webhooks", "rotate", w.id, "--grace", "1h"]);
    const [next] = rotated.stdout.match(PUBLIC) ?? [];
    expect(next).toBe((await getWebhook(cli, w.id)).public_key);
    expect(next).not.toBe(w.public_key);
    expect(rotated.stdout).not.toMatch(/whsk_/);
    const back = await cli.run(["webhooks", "update", w.id, "--signature-scheme", "standard-webhooks"]);
    expect(back.code).toBe(0);
    expect(back.stdout.match(new RegExp(SECRET, "g"))).toHaveLength(1);
    expect(back.stdout).not.toMatch(/public key/);
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

  it("test sends a sample event to the endpoint and shows its delivery", async () => {
    const cli = await cliHarness();
    const w = await created(cli, "message.delivered,message.bounced");
    const run = await cli.run(["webhooks", "test", w.id, "--type", "message.bounced"]);
    expect(run.code).toBe(0);
    const [delivery] = (
      await unwrap(cli.client.GET("/api/v1/webhooks/{id}/deliveries", { params: { path: { id: w.id } } }))
    ).data;
    expect(delivery).toMatchObject({ event_type: "message.bounced", status: "pending" });
    expect(run.stdout).toContain(`Sent a test message.bounced event to endpoint ${w.id}.`);
    expect(run.stdout).toMatch(new RegExp(`^event +${delivery!.event_id}$`, "m"));
    expect(run.stdout).toMatch(new RegExp(`^delivery +${delivery!.id}$`, "m"));
    expect(run.stdout).toContain(`npx herald deliveries get ${delivery!.id}`);

    const json = await cli.run(["webhooks", "test", w.id, "--json"]);
    const answer = json.json<{ event: { id: string; type: string }; delivery: { id: string } }>();
    expect(answer.event.type).toBe("message.delivered");
    expect(
      await unwrap(cli.client.GET("/api/v1/events/{id}", { params: { path: { id: answer.event.id } } })),
    ).toEqual(answer.event);

    const refused = await cli.run(["webhooks", "test", w.id, "--type", "domain.verified"]);
    expect(refused.code).toBe(1);
    expect(refused.err).toHaveLength(1);
    expect(refused.err[0]).toMatch(
      /^herald: 422 validation_failed: .*\(body\.type: type must be one of the endpoint's/,
    );
  });

  it("recover queues the skipped events of a window; refuses a window over 14 days", async () => {
    const cli = await cliHarness();
    const w = await created(cli, "message.delivered");
    await cli.run(["webhooks", "update", w.id, "--disable"]);
    for (let i = 0; i < 2; i++) expect((await cli.run(["events", "send", "message.delivered"])).code).toBe(0);
    const disabled = await cli.run(["webhooks", "recover", w.id, "--since", "1h"]);
    expect(disabled.code).toBe(1);
    expect(disabled.err).toEqual([
      expect.stringMatching(/^herald: 409 endpoint_disabled: The endpoint is disabled/),
    ]);
    await cli.run(["webhooks", "enable", w.id]);

    const run = await cli.run(["webhooks", "recover", w.id, "--since", "1h"]);
    expect(run.code).toBe(0);
    expect(run.out[0]).toMatch(
      new RegExp(`^Queued 2 deliveries for endpoint ${w.id} \\(events from .+ UTC\\)\\.$`),
    );
    const { data } = await unwrap(
      cli.client.GET("/api/v1/webhooks/{id}/deliveries", { params: { path: { id: w.id } } }),
    );
    expect(data.filter((d) => d.trigger === "manual" && d.status === "pending")).toHaveLength(2);

    const again = await cli.run([
      "webhooks",
      "recover",
      w.id,
      "--since",
      new Date(Date.now() - 3_600_000).toISOString(),
      "--json",
    ]);
    expect(again.json()).toMatchObject({ queued: 0 });
    expect(Object.keys(again.json<object>()).sort()).toEqual(["queued", "since", "until"]);

    const long = await cli.run(["webhooks", "recover", w.id, "--since", "15d"]);
    expect(long.code).toBe(1);
    expect(long.err).toHaveLength(1);
    expect(long.err[0]).toContain("422 validation_failed");
    expect(long.err[0]).toContain("body.since: since must be at most 14 days before until");
    const missing = await cli.run(["webhooks", "recover", w.id]);
    expect(missing.code).toBe(2);
    expect(missing.err).toEqual(["herald: --since is required; see npx herald webhooks recover --help"]);
    const junk = await cli.run(["webhooks", "recover", w.id, "--since", "last tuesday"]);
    expect(junk.code).toBe(2);
  });
});

describe("webhooks: client certificate (mutual TLS)", () => {
  it("create and update take --client-cert/--client-key files; --remove-client-cert drops it; the key is never printed", async () => {
    const tls = await testClientTls();
    const dir = mkdtempSync(join(tmpdir(), "herald-cli-mtls-"));
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    try {
      const cert = file("alice.crt", tls.alice.cert);
      const key = file("alice.key", tls.alice.key);
      const encrypted = file("alice-enc.key", tls.aliceEncryptedKey);
      const bobCert = file("bob.crt", tls.bob.cert);
      const bobKey = file("bob.key", tls.bob.key);
      const cli = await cliHarness();
      const made = await cli.run([
        "webhooks",
        "create",
        "--url",
        receiverUrl(),
        "--events",
        "message.delivered",
        "--client-cert",
        cert,
        "--client-key",
        key,
      ]);
      expect(made.code).toBe(0);
      expect(made.stdout).toMatch(
        /^client certificate +CN=alice; issued by CN=Herald Test Client CA clients; valid until \S+; sha256 [0-9a-f:]{95}$/m,
      );
      const [w] = (await unwrap(cli.client.GET("/api/v1/webhooks"))).data;
      // An encrypted key: its passphrase from HERALD_CLIENT_KEY_PASSPHRASE, never an argument.
      const missing = await cli.run([
        "webhooks",
        "update",
        w!.id,
        "--client-cert",
        cert,
        "--client-key",
        encrypted,
      ]);
      expect(missing.code).toBe(1);
      expect(missing.err.join("\n")).toContain("body.client_certificate.passphrase");
      const withPass = await cli.run(
        ["webhooks", "update", w!.id, "--client-cert", bobCert, "--client-key", bobKey, "--json"],
        { HERALD_CLIENT_KEY_PASSPHRASE: "" },
      );
      expect(withPass.json<Webhook>().client_certificate?.subject).toBe("CN=bob");
      const enc = await cli.run(
        ["webhooks", "update", w!.id, "--client-cert", cert, "--client-key", encrypted],
        {
          HERALD_CLIENT_KEY_PASSPHRASE: ENCRYPTED_KEY_PASSPHRASE,
        },
      );
      expect(enc.code).toBe(0);
      expect(enc.stdout).toMatch(/^client certificate +CN=alice;/m);
      const removed = await cli.run(["webhooks", "update", w!.id, "--remove-client-cert", "--json"]);
      expect(removed.json<Webhook>().client_certificate).toBeNull();
      // Usage errors: half a pair, an unreadable file, both a certificate and its removal.
      const half = await cli.run(["webhooks", "update", w!.id, "--client-cert", cert]);
      expect([half.code, half.err.join(" ")]).toEqual([2, expect.stringContaining("go together")]);
      const unreadable = await cli.run([
        "webhooks",
        "update",
        w!.id,
        "--client-cert",
        cert,
        "--client-key",
        join(dir, "nope"),
      ]);
      expect([unreadable.code, unreadable.err.join(" ")]).toEqual([
        2,
        expect.stringContaining("cannot read"),
      ]);
      const both = await cli.run([
        "webhooks",
        "update",
        w!.id,
        "--client-cert",
        cert,
        "--client-key",
        key,
        "--remove-client-cert",
      ]);
      expect(both.code).toBe(2);
      for (const r of [made, missing, withPass, enc, removed, half, unreadable, both]) {
        const all = `${r.stdout}\n${r.err.join("\n")}`;
        expect(all).not.toContain("PRIVATE KEY");
        expect(all).not.toContain(ENCRYPTED_KEY_PASSPHRASE);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
