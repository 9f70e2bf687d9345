import { describe, expect, it } from "vitest";
import type { Delivery, WebhookWithSecret } from "../../clients/typescript/client.ts";
import { unwrap } from "../../clients/typescript/client.ts";
import { type CliHarness, cliHarness, receiverUrl } from "./helpers.ts";

async function setup(events = 3) {
  const cli = await cliHarness();
  const w = (
    await cli.run([
      "webhooks",
      "create",
      "--url",
      receiverUrl(),
      "--events",
      "message.delivered,message.bounced",
      "--json",
    ])
  ).json<WebhookWithSecret>();
  const types = ["message.delivered", "message.bounced", "message.delivered"];
  for (let i = 0; i < events; i++) {
    expect((await cli.run(["events", "send", types[i % 3]!, "--json"])).code).toBe(0);
  }
  return { cli, w };
}

const apiList = (cli: CliHarness, id: string, query: Record<string, string> = {}) =>
  unwrap(cli.client.GET("/api/v1/webhooks/{id}/deliveries", { params: { path: { id }, query } }));

describe("herald deliveries", () => {
  it("list prints a table of attempts; --json is the API's page", async () => {
    const { cli, w } = await setup();
    const api = await apiList(cli, w.id);
    expect(api.data).toHaveLength(3);
    const run = await cli.run(["deliveries", "list", w.id]);
    expect(run.code).toBe(0);
    expect(run.out[0]).toMatch(/^ID +CREATED \(UTC\) +EVENT TYPE +EVENT ID +ATTEMPT +STATUS +RESULT$/);
    api.data.forEach((d, i) => {
      expect(run.out[i + 1]).toMatch(
        new RegExp(
          `^${d.id} +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +${d.event_type} +${d.event_id} +1 automatic +pending +-$`,
        ),
      );
    });
    expect(run.out).toHaveLength(4);
    const json = await cli.run(["deliveries", "list", w.id, "--json"]);
    expect(json.json()).toEqual(api);
  });

  it("list filters by status, event type, event id and time", async () => {
    const { cli, w } = await setup();
    const ids = async (...flags: string[]) =>
      (await cli.run(["deliveries", "list", w.id, "--json", ...flags]))
        .json<{ data: Delivery[] }>()
        .data.map((d) => d.event_type);
    expect(await ids("--event-type", "message.bounced")).toEqual(["message.bounced"]);
    expect(await ids("--status", "pending")).toHaveLength(3);
    expect(await ids("--status", "failed")).toEqual([]);
    expect(await ids("--since", "1h")).toHaveLength(3);
    expect(await ids("--until", "1h")).toEqual([]);
    expect(await ids("--since", new Date(Date.now() - 60_000).toISOString())).toHaveLength(3);
    const [first] = (await apiList(cli, w.id)).data;
    expect(await ids("--event-id", first!.event_id)).toEqual([first!.event_type]);
    const bad = await cli.run(["deliveries", "list", w.id, "--status", "lost"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toEqual([
      'herald: --status must be one of pending, succeeded, failed, skipped, cancelled, not "lost"; see npx herald deliveries list --help',
    ]);
    const badType = await cli.run(["deliveries", "list", w.id, "--event-type", "nope"]);
    expect(badType.code).toBe(1);
    expect(badType.err).toHaveLength(1);
    expect(badType.err[0]).toMatch(/^herald: 422 validation_failed: .*\(query\.event_type: /);
  });

  it("list --limit shows the next cursor; --all walks every page", async () => {
    const { cli, w } = await setup(5);
    const page = await cli.run(["deliveries", "list", w.id, "--limit", "2"]);
    expect(page.out.filter((l) => /^[0-9a-f]{8}-/.test(l))).toHaveLength(2);
    expect(page.out.at(-1)).toMatch(
      new RegExp(`^More: npx herald deliveries list ${w.id} --cursor \\S+ \\(or --all\\)$`),
    );
    const all = await cli.run(["deliveries", "list", w.id, "--all", "--limit", "2", "--json"]);
    const walked = all.json<{ data: Delivery[]; next_cursor: null }>();
    expect(walked.next_cursor).toBeNull();
    expect(walked.data).toEqual((await apiList(cli, w.id)).data);
    expect(walked.data).toHaveLength(5);
  });

  it("list of an unknown endpoint is one 404 line", async () => {
    const { cli } = await setup(0);
    const run = await cli.run(["deliveries", "list", crypto.randomUUID()]);
    expect(run.code).toBe(1);
    expect(run.err).toEqual(["herald: 404 not_found: The endpoint was not found."]);
  });

  it("get prints one delivery; --json matches the API", async () => {
    const { cli, w } = await setup(1);
    const [d] = (await apiList(cli, w.id)).data;
    const run = await cli.run(["deliveries", "get", d!.id]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^id +${d!.id}$`, "m"));
    expect(run.stdout).toMatch(/^status +pending$/m);
    expect(run.stdout).toMatch(new RegExp(`^event +${d!.event_id} \\(message\\.delivered\\)$`, "m"));
    expect(run.stdout).toMatch(/^attempt +1 \(automatic\)$/m);
    expect(run.stdout).toMatch(/^attempted +-$/m);
    const json = await cli.run(["deliveries", "get", d!.id, "--json"]);
    expect(json.json()).toEqual(
      await unwrap(
        cli.client.GET("/api/v1/webhooks/deliveries/{delivery_id}", {
          params: { path: { delivery_id: d!.id } },
        }),
      ),
    );
    const missing = await cli.run(["deliveries", "get", crypto.randomUUID()]);
    expect(missing.code).toBe(1);
    expect(missing.err).toEqual(["herald: 404 not_found: The delivery was not found."]);
  });

  it("retry queues a manual attempt; on a disabled endpoint it is one 409 line", async () => {
    const { cli, w } = await setup(1);
    const [d] = (await apiList(cli, w.id)).data;
    const run = await cli.run(["deliveries", "retry", d!.id]);
    expect(run.code).toBe(0);
    const retried = (await apiList(cli, w.id)).data.find((x) => x.trigger === "manual")!;
    expect(retried).toMatchObject({ attempt: 2, status: "pending", event_id: d!.event_id });
    expect(run.out[0]).toBe(`Queued attempt 2 of event ${d!.event_id} as delivery ${retried.id}.`);
    const json = await cli.run(["deliveries", "retry", d!.id, "--json"]);
    expect(json.json()).toMatchObject({ trigger: "manual", status: "pending", attempt: 3 });

    await cli.run(["webhooks", "update", w.id, "--disable"]);
    const refused = await cli.run(["deliveries", "retry", d!.id]);
    expect(refused.code).toBe(1);
    expect(refused.out).toEqual([]);
    expect(refused.err).toEqual([
      "herald: 409 endpoint_disabled: The endpoint is disabled (manual); enable it before retrying.",
    ]);
  });
});

describe("deliveryResult", () => {
  it("says why a cancelled attempt was superseded (ADR 19) rather than naming a failure", async () => {
    const { deliveryResult } = await import("../../src/cli/deliveries.ts");
    const superseded = {
      status: "cancelled",
      error: "superseded",
      response_status: null,
      duration_ms: null,
    } as unknown as Delivery;
    expect(deliveryResult(superseded)).toBe("superseded (another attempt of this event succeeded; not sent)");
  });
});
