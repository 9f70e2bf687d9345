import { describe, expect, it } from "vitest";
import type { Delivery, Erasure, Settings, WebhookWithSecret } from "../../clients/typescript/client.ts";
import { unwrap } from "../../clients/typescript/client.ts";
import { cliHarness, receiverUrl } from "./helpers.ts";

async function withEvent(recipient = "ada@example.com") {
  const cli = await cliHarness();
  const w = (
    await cli.run(["webhooks", "create", "--url", receiverUrl(), "--events", "message.delivered", "--json"])
  ).json<WebhookWithSecret>();
  const resourceId = crypto.randomUUID();
  const sent = await cli.run([
    "events",
    "send",
    "message.delivered",
    "--resource-id",
    resourceId,
    "--data",
    JSON.stringify({ recipient }),
    "--json",
  ]);
  expect(sent.code).toBe(0);
  return { cli, w, resourceId, eventId: sent.json<{ id: string }>().id };
}

describe("herald erasures", () => {
  it("create --resource-id erases the events and prints what it removed; get and list show it", async () => {
    const { cli, w, resourceId, eventId } = await withEvent();
    const run = await cli.run(["erasures", "create", "--resource-id", resourceId]);
    expect(run.code).toBe(0);
    expect(run.err).toEqual([]);
    expect(run.out[0]).toBe("Erased 1 event and 1 delivery record (1 pending, now cancelled).");
    expect(run.stdout).toMatch(new RegExp(`^subject +resource_id ${resourceId}$`, "m"));
    const id = /^id +(\S+)$/m.exec(run.stdout)?.[1];
    expect(id).toBeDefined();

    const event = await cli.client.GET("/api/v1/events/{id}", { params: { path: { id: eventId } } });
    expect(event.response.status).toBe(404);
    const [record] = (
      await unwrap(cli.client.GET("/api/v1/webhooks/{id}/deliveries", { params: { path: { id: w.id } } }))
    ).data as Delivery[];
    expect(record).toMatchObject({ status: "cancelled", response_body: null });
    expect((await cli.run(["deliveries", "get", record!.id])).stdout).toMatch(/^erased +\d{4}-.*are gone$/m);

    const got = await cli.run(["erasures", "get", id!, "--json"]);
    expect(got.json<Erasure>()).toEqual(
      await unwrap(cli.client.GET("/api/v1/erasures/{id}", { params: { path: { id: id! } } })),
    );
    const listed = await cli.run(["erasures", "list"]);
    expect(listed.out[0]).toMatch(/^ID +WHEN \(UTC\) +SUBJECT +EVENTS +DELIVERIES +CANCELLED$/);
    expect(listed.out[1]).toMatch(new RegExp(`^${id} +\\S+ \\S+ +resource_id ${resourceId} +1 +1 +1$`));
    expect(
      (await cli.run(["erasures", "list", "--all", "--json"])).json<{ data: Erasure[] }>().data,
    ).toHaveLength(1);
  });

  it("create --recipient --json prints the API's answer; the recipient is not echoed", async () => {
    const { cli, eventId } = await withEvent("Grace@Example.com");
    const run = await cli.run(["erasures", "create", "--recipient", "grace@example.com", "--json"]);
    expect(run.code).toBe(0);
    const erasure = run.json<Erasure>();
    expect(erasure).toMatchObject({ subject: "recipient", resource_id: null, events_erased: 1 });
    expect(run.stdout.toLowerCase()).not.toContain("grace");
    const event = await cli.client.GET("/api/v1/events/{id}", { params: { path: { id: eventId } } });
    expect(event.response.status).toBe(404);
  });

  it("needs exactly one subject (exit 2); an API refusal is one line (exit 1)", async () => {
    const cli = await cliHarness();
    for (const argv of [[], ["--resource-id", crypto.randomUUID(), "--recipient", "a@b.c"]]) {
      const r = await cli.run(["erasures", "create", ...argv]);
      expect(r.code).toBe(2);
      expect(r.err).toEqual([
        "herald: give exactly one of --resource-id and --recipient; see npx herald erasures create --help",
      ]);
    }
    const bad = await cli.run(["erasures", "create", "--resource-id", "nope"]);
    expect(bad.code).toBe(1);
    expect(bad.err).toHaveLength(1);
    expect(bad.err[0]).toMatch(/^herald: 422 validation_failed: .*body\.resource_id/);
  });
});

describe("herald settings", () => {
  it("get shows the server's retention; set --retention changes it, default resets it", async () => {
    const cli = await cliHarness();
    const before = await cli.run(["settings", "get"]);
    expect(before.code).toBe(0);
    expect(before.stdout).toMatch(/^retention +30d \(the server's HERALD_RETENTION\)$/m);
    const set = await cli.run(["settings", "set", "--retention", "7d", "--json"]);
    expect(set.code).toBe(0);
    expect(set.json<Settings>()).toMatchObject({
      retention: "7d",
      effective_retention: "7d",
      max_retention: "30d",
    });
    expect((await cli.run(["settings", "get"])).stdout).toMatch(/^retention +7d$/m);
    const reset = await cli.run(["settings", "set", "--retention", "default", "--json"]);
    expect(reset.json<Settings>()).toMatchObject({ retention: null, effective_retention: "30d" });
  });

  it("refuses a retention longer than the server's in one line, and set without a change is a usage error", async () => {
    const cli = await cliHarness();
    const long = await cli.run(["settings", "set", "--retention", "60d"]);
    expect(long.code).toBe(1);
    expect(long.err).toHaveLength(1);
    expect(long.err[0]).toContain("body.retention: retention must be at most 30d");
    const none = await cli.run(["settings", "set"]);
    expect(none.code).toBe(2);
    expect(none.err[0]).toMatch(/^herald: nothing to change: give --retention/);
  });
});
