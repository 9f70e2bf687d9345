import { describe, expect, it } from "vitest";
import { makeConsoleHarness } from "./console-harness.ts";

describe("an attempt superseded by its pair's success (ADR 19)", () => {
  it("says why in the API, on its attempt page and in the deliveries list", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const made = await h.api(token, "/webhooks", {
      method: "POST",
      body: JSON.stringify({ url: "http://127.0.0.1:9/hook", events: ["message.delivered"] }),
    });
    const endpoint = (await made.json()) as { id: string };
    const published = await h.publish(token);
    const event = (await published.json()) as { id: string };
    const first = [...h.repos.deliveries.rows.values()].find((d) => d.eventId === event.id)!;
    // Attempt 1 failed with attempt 2 due later; a manual attempt 3 succeeds.
    const second = { ...first, id: crypto.randomUUID(), attempt: 2 };
    const manual = { ...first, id: crypto.randomUUID(), attempt: 3, trigger: "manual" as const };
    await h.repos.deliveries.insertMany([second, manual]);
    const at = new Date();
    const result = { responseBody: "ok", durationMs: 5, attemptedAt: at, nextAttemptAt: null, next: null };
    await h.repos.deliveries.record([
      { ...result, id: first.id, status: "failed", responseStatus: 500, error: "http_status" },
      {
        ...result,
        id: manual.id,
        status: "succeeded",
        responseStatus: 200,
        error: null,
        acknowledges: { eventId: event.id, webhookId: endpoint.id },
      },
    ]);

    const api = await h.api(token, `/webhooks/deliveries/${second.id}`);
    expect(api.status).toBe(200);
    expect(await api.json()).toMatchObject({
      status: "cancelled",
      error: "superseded",
      trigger: "automatic",
      attempted_at: null,
      next_attempt_at: null,
    });

    const page = await (await b.get(`/console/deliveries/${second.id}`)).text();
    expect(page).toContain("<code>superseded</code>");
    expect(page).toContain("another attempt of this event to this endpoint succeeded first");
    expect(page).not.toContain("data-follow");

    const list = await (await b.get("/console/deliveries?status=cancelled")).text();
    expect(list).toContain(`/deliveries/${second.id}`);
    expect(list).toContain("<td>superseded</td>");
  });
});
