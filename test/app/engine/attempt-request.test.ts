import { describe, expect, it } from "vitest";
import { SCOPE, sampleMessage, scriptedSender } from "../../support/engine-harness.ts";
import { setup } from "./engine-suite.ts";

describe("a recorded attempt keeps what it was sent with", () => {
  it("carries the signature scheme and custom header names (never values) in force at its send, not later ones", async () => {
    const t = await setup({
      sender: scriptedSender(() => ({ ok: false, responseStatus: 500, error: "http_status" })),
    });
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://hooks.example.com/a",
      events: ["message.delivered"],
      signatureScheme: "standard-webhooks",
      headers: { "X-Route": "value-a", "X-Tenant": "value-b" },
    });
    await t.events.publish(SCOPE, { type: "message.delivered", data: sampleMessage() });
    await t.drain();
    expect(t.sender.requests[0]!.scheme).toBe("standard-webhooks");

    // The endpoint changes before the retry: attempt 2 is sent, and recorded, under the new settings.
    await t.endpoints.change(SCOPE, endpoint.id, {
      signatureScheme: "herald-v1",
      headers: { "X-Route": null, "X-New": "value-c" },
    });
    t.clock.advance(60_000);
    await t.drain();
    const history = await t.history(endpoint.id);
    const byAttempt = new Map(history.map((d) => [d.attempt, d]));
    const first = byAttempt.get(1)!;
    const second = byAttempt.get(2)!;
    expect(first.status).toBe("failed");
    expect(first.signatureScheme).toBe("standard-webhooks");
    expect([...first.headerNames!].sort()).toEqual(["X-Route", "X-Tenant"]);
    expect(second.status).toBe("failed");
    expect(second.signatureScheme).toBe("herald-v1");
    expect([...second.headerNames!].sort()).toEqual(["X-New", "X-Tenant"]);
    // Names only: no value reaches the record.
    expect(JSON.stringify(history)).not.toMatch(/value-[abc]/);
    // The follow-up not sent yet has none.
    const pending = history.find((d) => d.status === "pending");
    if (pending) expect([pending.signatureScheme, pending.headerNames]).toEqual([null, null]);
  });

  it("does not send, or record, a custom header stored before its name was reserved (traceparent)", async () => {
    const t = await setup({ sender: scriptedSender(() => ({ ok: true, responseStatus: 200 })) });
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://hooks.example.com/a",
      events: ["message.delivered"],
      headers: { "X-Route": "value-a" },
    });
    // As an older Herald stored it: the name was allowed then, and the API refuses it now.
    const [route] = (await t.repos.endpoints.get(SCOPE, endpoint.id))!.headers;
    await t.repos.endpoints.update(SCOPE, endpoint.id, {
      headers: [route!, { name: "Traceparent", sealed: route!.sealed }],
      updatedAt: t.clock.now(),
    });
    await t.events.publish(SCOPE, { type: "message.delivered", data: sampleMessage() });
    await t.drain();
    expect(t.sender.requests.map((r) => r.headers)).toEqual([[["X-Route", "value-a"]]]);
    const [sent] = await t.history(endpoint.id);
    expect(sent!.headerNames).toEqual(["X-Route"]);
  });
});
