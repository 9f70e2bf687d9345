import { describe, expect, it } from "vitest";
import type { AttemptResult } from "../../../../src/app/ports/deliveries.ts";
import { verifyDelivery } from "../../../support/receiver.ts";
import { makeConsoleHarness } from "./console-harness.ts";

const HOOK = "http://127.0.0.1:9/hook";

/** The request head shown on an attempt page: its request line, then its headers by name. */
function requestHead(page: string) {
  const head = unescapeHtml(/<pre class="code" id="request-head"[^>]*>([\s\S]*?)<\/pre>/.exec(page)![1]!);
  const lines = head.split("\n");
  return {
    line: lines[0],
    headers: new Map(
      lines.slice(1).map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)] as const),
    ),
  };
}

describe("console: the request sent uses what was in force for the attempt", () => {
  it("after the endpoint's scheme and headers change, the attempt page still shows the scheme and header names the attempt used", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const made = await h.api(token, "/webhooks", {
      method: "POST",
      body: JSON.stringify({ url: HOOK, events: ["message.delivered"], headers: { "X-Route": "secret-a" } }),
    });
    expect(made.status).toBe(201);
    const endpoint = (await made.json()) as { id: string; secret: string };
    const published = await h.publish(token);
    expect(published.status).toBe(202);
    const event = (await published.json()) as { id: string };
    const delivery = [...h.repos.deliveries.rows.values()].find((d) => d.eventId === event.id)!;
    // Recorded as the engine records a send under the endpoint as it then was (herald-v1, X-Route).
    const attemptedAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 1_000);
    const result: AttemptResult = {
      id: delivery.id,
      status: "succeeded",
      responseStatus: 200,
      responseBody: "ok",
      error: null,
      durationMs: 12,
      attemptedAt,
      nextAttemptAt: null,
      next: null,
      signatureScheme: "herald-v1",
      headerNames: ["X-Route"],
    };
    await h.repos.deliveries.record([result]);

    h.advance(10_000);
    const patched = await h.api(token, `/webhooks/${endpoint.id}`, {
      method: "PATCH",
      body: JSON.stringify({ signature_scheme: "standard-webhooks", headers: { "X-Other": "b" } }),
    });
    expect(patched.status).toBe(200);

    const page = await (await b.get(`/console/deliveries/${delivery.id}`)).text();
    const { line, headers } = requestHead(page);
    expect(line).toBe(`POST ${HOOK}`);
    // The scheme in force at the attempt, not the endpoint's current one.
    expect(headers.has("X-Webhook-Signature")).toBe(true);
    expect(headers.has("webhook-signature")).toBe(false);
    // The header names sent then, values masked; the header added since is not shown.
    expect(headers.get("X-Route")).toBe("********");
    expect(headers.has("X-Other")).toBe(false);
    expect(page).not.toContain("secret-a");
    expect(page).toContain("the scheme in force for this attempt (<code>herald-v1</code>)");
    expect(page).not.toContain("The record does not say which signature scheme");
    expect(page).not.toContain("This endpoint was changed after this attempt");
    // Its signature verifies over the body shown, with the secret active then.
    const body = (await h.repos.events.getMany([event.id]))[0]!.body;
    const verdict = verifyDelivery(
      {
        "x-webhook-timestamp": headers.get("X-Webhook-Timestamp"),
        "x-webhook-signature": headers.get("X-Webhook-Signature"),
      },
      Buffer.from(body, "utf8"),
      [endpoint.secret],
      attemptedAt.getTime() / 1000,
    );
    expect(verdict).toMatchObject({ ok: true });
  });

  it("a record from before the scheme was kept still says it cannot tell, and shows the endpoint's current ones", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const made = await h.api(token, "/webhooks", {
      method: "POST",
      body: JSON.stringify({
        url: HOOK,
        events: ["message.delivered"],
        signature_scheme: "standard-webhooks",
      }),
    });
    expect(made.status).toBe(201);
    const published = await h.publish(token);
    const event = (await published.json()) as { id: string };
    const delivery = [...h.repos.deliveries.rows.values()].find((d) => d.eventId === event.id)!;
    await h.repos.deliveries.record([
      {
        id: delivery.id,
        status: "succeeded",
        responseStatus: 200,
        responseBody: "ok",
        error: null,
        durationMs: 12,
        attemptedAt: new Date(Date.now() + 1_000),
        nextAttemptAt: null,
        next: null,
      },
    ]);
    const page = await (await b.get(`/console/deliveries/${delivery.id}`)).text();
    expect(page).toContain(
      "The record does not say which signature scheme and custom headers were in force for this attempt",
    );
    expect(requestHead(page).headers.has("webhook-signature")).toBe(true);
  });
});

function unescapeHtml(s: string): string {
  return s
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&amp;", "&");
}
