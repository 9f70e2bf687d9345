import { describe, expect, it } from "vitest";
import { unwrap } from "../../clients/typescript/client.ts";
import { cliHarness } from "./helpers.ts";
import { created } from "./webhooks-support.ts";

// `herald webhooks test` and `herald webhooks recover`: what they queue for an endpoint.

describe("herald webhooks", () => {
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
