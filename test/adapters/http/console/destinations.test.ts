import { describe, expect, it } from "vitest";
import { makeConsoleHarness, pathOf } from "./console-harness.ts";

// The console shows a broker endpoint's kind, its credential-free url and settings (never a credential),
// keeps its url out of the settings form, and shows a broker's receipt on the attempt page (ADR 27).
const SASL_PASSWORD = "console-sasl-pw-1b7e";
const SQS_SECRET = "console-sqs-secret-44c0";

describe("console: broker endpoints", () => {
  it("shows the kind, the derived url and the settings, never a credential, on the overview and endpoint page", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const made = await h.api(token, "/webhooks", {
      method: "POST",
      body: JSON.stringify({
        kind: "kafka",
        events: ["message.delivered"],
        kafka: {
          brokers: ["127.0.0.1:9092"],
          topic: "orders",
          sasl: { mechanism: "plain", username: "herald", password: SASL_PASSWORD },
        },
      }),
    });
    expect(made.status).toBe(201);
    const { id } = (await made.json()) as { id: string };
    const page = await (await b.get(`/console/endpoints/${id}`)).text();
    expect(page).toContain("<dt>Kind</dt><dd><code>kafka</code>");
    expect(page).toContain("<code>kafka://127.0.0.1:9092/orders</code>");
    expect(page).toContain("plain, user herald, password ********");
    // No URL box (a broker endpoint's url is derived) and no client certificate (HTTPS only).
    expect(page).not.toContain('name="url"');
    expect(page).not.toContain('id="h-certificate"');
    const overview = await (await b.get("/console")).text();
    expect(overview).toContain("kafka://127.0.0.1:9092/orders");
    for (const text of [page, overview, h.logLines.join("\n")]) expect(text).not.toContain(SASL_PASSWORD);

    // Saving the settings form keeps the destination: it has no url field to send.
    const saved = await b.post(`/console/endpoints/${id}/update`, {
      _csrf: await b.csrf(`/console/endpoints/${id}`),
      description: "orders stream",
      events: ["message.delivered", "message.sent"],
    });
    expect(saved.status).toBe(303);
    const e = h.repos.endpoints.rows.get(id)!;
    expect([e.description, e.url, e.destination?.kind]).toEqual([
      "orders stream",
      "kafka://127.0.0.1:9092/orders",
      "kafka",
    ]);
  });

  it("shows an SQS endpoint's key id but not its secret, and an attempt's receipt", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const made = await h.api(token, "/webhooks", {
      method: "POST",
      body: JSON.stringify({
        kind: "sqs",
        events: ["message.delivered"],
        sqs: {
          queue_url: "http://127.0.0.1:9324/000000000000/orders",
          region: "elasticmq",
          access_key_id: "x1",
          secret_access_key: SQS_SECRET,
        },
      }),
    });
    expect(made.status).toBe(201);
    const { id } = (await made.json()) as { id: string };
    const published = await h.publish(token);
    expect(published.status).toBe(202);
    const [d] = [...h.repos.deliveries.rows.values()].filter((x) => x.webhookId === id);
    await h.repos.deliveries.record([
      {
        id: d!.id,
        status: "succeeded",
        responseStatus: null,
        responseBody: null,
        error: null,
        durationMs: 7,
        attemptedAt: new Date(),
        nextAttemptAt: null,
        next: null,
        receipt: { message_id: "5fea7756-0ea4-451a-a703-a558b933e274" },
      },
    ]);
    const endpointPage = await (await b.get(`/console/endpoints/${id}`)).text();
    expect(endpointPage).toContain("<dt>Access key id</dt><dd><code>x1</code>");
    const attempt = await (await b.get(`/console/deliveries/${d!.id}`)).text();
    expect(attempt).toContain(
      "<dt>Receipt</dt><dd>message_id <code>5fea7756-0ea4-451a-a703-a558b933e274</code>",
    );
    expect(attempt).toContain("sqs message to http://127.0.0.1:9324/000000000000/orders");
    for (const text of [endpointPage, attempt, h.logLines.join("\n")]) expect(text).not.toContain(SQS_SECRET);
  });

  it("shows a portal session its broker endpoint the same way, read-only for the destination", async () => {
    const h = await makeConsoleHarness();
    const { token } = await h.newToken();
    const made = await h.api(token, "/webhooks", {
      method: "POST",
      body: JSON.stringify({
        kind: "rabbitmq",
        events: ["message.delivered"],
        rabbitmq: {
          url: `amqp://herald:${SASL_PASSWORD}@127.0.0.1:5672/`,
          exchange: "events",
          routing_key: "k",
        },
      }),
    });
    const { id } = (await made.json()) as { id: string };
    const link = (await (
      await h.api(token, "/portal-sessions", { method: "POST", body: JSON.stringify({ webhook_ids: [id] }) })
    ).json()) as { url: string };
    const p = h.browser("herald_portal");
    await p.get(pathOf(link.url));
    const page = await (await p.get(`/portal/endpoints/${id}`)).text();
    expect(page).toContain("<dt>Kind</dt><dd><code>rabbitmq</code>");
    expect(page).toContain("amqp://herald@127.0.0.1:5672/?exchange=events&amp;routing_key=k");
    expect(page).toContain("<dt>Password</dt><dd><code>********</code>");
    expect(page).not.toContain('name="url"');
    expect(page).not.toContain(SASL_PASSWORD);
  });
});
