import { describe, expect, it } from "vitest";
import type { Webhook, WebhookWithSecret } from "../../clients/typescript/client.ts";
import { unwrap } from "../../clients/typescript/client.ts";
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
