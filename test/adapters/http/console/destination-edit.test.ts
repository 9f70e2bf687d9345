import { describe, expect, it } from "vitest";
import { makeConsoleHarness, pathOf } from "./console-harness.ts";

// An endpoint's destination form (ADR 27) is a merge patch through the use case PATCH /webhooks uses:
// blank credential boxes keep the stored credentials, Remove boxes clear what the API lets null clear,
// the kind never changes, a bad input is shown beside its box with nothing changed, and no page or log
// holds a credential.

const SASL_PW = "edit-sasl-pw-51e0";
const AMQP_PW = "edit-amqp-pw-8c3d";
const SQS_SECRET = "edit-sqs-secret-2b9a";
const SQS_TOKEN = "edit-sqs-token-6f17";
const NEW_PW = "edit-new-pw-a4d2";
const CREDENTIALS = [SASL_PW, AMQP_PW, SQS_SECRET, SQS_TOKEN, NEW_PW];

type Harness = Awaited<ReturnType<typeof makeConsoleHarness>>;

const BODIES = {
  kafka: {
    kafka: {
      brokers: ["127.0.0.1:9092"],
      topic: "orders",
      sasl: { mechanism: "plain", username: "herald", password: SASL_PW },
    },
  },
  rabbitmq: { rabbitmq: { url: "amqp://herald@127.0.0.1:5672/", password: AMQP_PW, exchange: "events" } },
  sqs: {
    sqs: {
      queue_url: "http://127.0.0.1:9324/000000000000/orders",
      region: "elasticmq",
      access_key_id: "x1",
      secret_access_key: SQS_SECRET,
      session_token: SQS_TOKEN,
    },
  },
} as const;

async function make(h: Harness, token: string, kind: keyof typeof BODIES): Promise<string> {
  const res = await h.api(token, "/webhooks", {
    method: "POST",
    body: JSON.stringify({ kind, events: ["message.delivered"], ...BODIES[kind] }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

const stored = (h: Harness, id: string) => h.repos.endpoints.rows.get(id)!.destination!;
const open = (h: Harness, sealed: string | null | undefined) => (sealed ? h.cipher.open(sealed) : null);

/** The destination form's fields as the page shows them (hidden kind, text boxes, selects, textareas). */
function formOf(page: string): Record<string, string> {
  const section = /<section aria-labelledby="h-destination">[\s\S]*?<\/section>/.exec(page)?.[0] ?? "";
  expect(section).not.toBe("");
  const out: Record<string, string> = {};
  for (const m of section.matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g))
    if (!/type="checkbox"/.test(m[0])) out[m[1]!] = m[2]!.replaceAll("&amp;", "&");
  for (const m of section.matchAll(/<select id="([^"]+)"[\s\S]*?<\/select>/g))
    out[m[1]!] =
      /<option value="([^"]+)" selected>/.exec(m[0])?.[1] ?? /<option value="([^"]+)"/.exec(m[0])![1]!;
  for (const m of section.matchAll(/<textarea id="([^"]+)"[^>]*>([^<]*)<\/textarea>/g)) out[m[1]!] = m[2]!;
  return out;
}

describe("console: changing a broker endpoint's destination", () => {
  it("changes a Kafka topic keeping the SASL password when left blank, sets a new one, then removes SASL", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const id = await make(h, token, "kafka");
    const pages: string[] = [];
    const page = await (await b.get(`/console/endpoints/${id}`)).text();
    pages.push(page);
    const form = formOf(page);
    expect(form).toMatchObject({ kind: "kafka", kafka_topic: "orders", kafka_sasl_mechanism: "plain" });
    expect(page).toContain('placeholder="******** (blank keeps it)"');
    const post = (change: Record<string, string>) =>
      b.post(`/console/endpoints/${id}/destination`, { ...form, ...change });

    const kept = await post({ kafka_topic: "orders.v2", kafka_brokers: "127.0.0.1:9092\n127.0.0.2:9092" });
    expect(kept.status).toBe(303);
    pages.push(await (await b.follow(kept)).text());
    expect(pages.at(-1)).toContain("Destination saved");
    const d1 = stored(h, id);
    expect(d1.kind === "kafka" && [d1.topic, d1.brokers, d1.sasl?.username]).toEqual([
      "orders.v2",
      ["127.0.0.1:9092", "127.0.0.2:9092"],
      "herald",
    ]);
    expect(d1.kind === "kafka" && (await open(h, d1.sasl?.password))).toBe(SASL_PW);

    expect((await post({ kafka_sasl_password: NEW_PW })).status).toBe(303);
    const d2 = stored(h, id);
    expect(d2.kind === "kafka" && (await open(h, d2.sasl?.password))).toBe(NEW_PW);

    expect((await post({ kafka_sasl_remove: "yes" })).status).toBe(303);
    const d3 = stored(h, id);
    expect(d3.kind === "kafka" && d3.sasl).toBeNull();
    pages.push(await (await b.get(`/console/endpoints/${id}`)).text());
    expect(pages.at(-1)).toContain("<dt>SASL</dt><dd><code>none</code>");
    for (const text of [...pages, h.logLines.join("\n")])
      for (const c of CREDENTIALS) expect(text).not.toContain(c);
  });

  it("turns SASL on for a Kafka endpoint without it, with its three boxes", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const res = await h.api(token, "/webhooks", {
      method: "POST",
      body: JSON.stringify({
        kind: "kafka",
        events: ["message.delivered"],
        kafka: { brokers: ["127.0.0.1:9092"], topic: "orders", tls: false },
      }),
    });
    const { id } = (await res.json()) as { id: string };
    const page = await (await b.get(`/console/endpoints/${id}`)).text();
    const form = formOf(page);
    expect([form.kafka_sasl_mechanism, form.kafka_tls]).toEqual(["none", "off"]);
    expect(page).not.toContain('name="kafka_sasl_remove"');
    const on = await b.post(`/console/endpoints/${id}/destination`, {
      ...form,
      kafka_sasl_mechanism: "scram-sha-256",
      kafka_sasl_username: "herald",
      kafka_sasl_password: NEW_PW,
    });
    expect(on.status).toBe(303);
    const d = stored(h, id);
    expect(d.kind === "kafka" && [d.tls, d.sasl?.mechanism, d.sasl?.username]).toEqual([
      false,
      "scram-sha-256",
      "herald",
    ]);
    expect(d.kind === "kafka" && (await open(h, d.sasl?.password))).toBe(NEW_PW);
  });

  it("keeps a RabbitMQ password when left blank, and removes it when ticked", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const id = await make(h, token, "rabbitmq");
    const form = formOf(await (await b.get(`/console/endpoints/${id}`)).text());
    const post = (change: Record<string, string>) =>
      b.post(`/console/endpoints/${id}/destination`, { ...form, ...change });
    expect((await post({ rabbitmq_routing_key: "orders" })).status).toBe(303);
    const d1 = stored(h, id);
    expect(d1.kind === "rabbitmq" && [d1.routingKey, d1.exchange]).toEqual(["orders", "events"]);
    expect(d1.kind === "rabbitmq" && (await open(h, d1.password))).toBe(AMQP_PW);
    expect((await post({ rabbitmq_password_remove: "yes" })).status).toBe(303);
    const d2 = stored(h, id);
    expect(d2.kind === "rabbitmq" && d2.password).toBeNull();
  });

  it("keeps the SQS secret key and session token when left blank, and clears the token when ticked", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const id = await make(h, token, "sqs");
    const form = formOf(await (await b.get(`/console/endpoints/${id}`)).text());
    const post = (change: Record<string, string>) =>
      b.post(`/console/endpoints/${id}/destination`, { ...form, ...change });
    expect((await post({ sqs_region: "eu-west-1", sqs_endpoint_url: "http://127.0.0.1:9324" })).status).toBe(
      303,
    );
    const d1 = stored(h, id);
    expect(d1.kind === "sqs" && [d1.region, d1.endpointUrl]).toEqual(["eu-west-1", "http://127.0.0.1:9324"]);
    expect(d1.kind === "sqs" && (await open(h, d1.secretAccessKey))).toBe(SQS_SECRET);
    expect(d1.kind === "sqs" && (await open(h, d1.sessionToken))).toBe(SQS_TOKEN);
    expect((await post({ sqs_session_token_remove: "yes", sqs_endpoint_url: "" })).status).toBe(303);
    const d2 = stored(h, id);
    expect(d2.kind === "sqs" && [d2.sessionToken, d2.endpointUrl]).toEqual([null, null]);
    expect(d2.kind === "sqs" && (await open(h, d2.secretAccessKey))).toBe(SQS_SECRET);
  });

  it("shows a bad input beside its box with nothing changed, never echoing a credential typed", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const id = await make(h, token, "kafka");
    const before = structuredClone(stored(h, id));
    const form = formOf(await (await b.get(`/console/endpoints/${id}`)).text());
    const res = await b.post(`/console/endpoints/${id}/destination`, {
      ...form,
      kafka_topic: "bad topic",
      kafka_sasl_password: NEW_PW,
    });
    expect(res.status).toBe(422);
    const page = await res.text();
    expect(page).toContain('<p class="field-error" id="kafka_topic-error">');
    expect(page).toMatch(/id="kafka_topic-error"><span class="sr">Error: <\/span>must be 1-249 of letters/);
    expect(page).toContain('value="bad topic"');
    expect(page).not.toContain(NEW_PW);
    expect(stored(h, id)).toEqual(before);
  });

  it("cannot change the kind: another kind posted is refused beside the kind, nothing changed", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const id = await make(h, token, "kafka");
    const before = structuredClone(stored(h, id));
    const csrf = await b.csrf(`/console/endpoints/${id}`);
    for (const kind of ["sqs", "https"]) {
      const res = await b.post(`/console/endpoints/${id}/destination`, {
        _csrf: csrf,
        kind,
        sqs_queue_url: "http://127.0.0.1:9324/000000000000/q",
        sqs_region: "elasticmq",
        sqs_access_key_id: "x1",
        kafka_topic: "orders",
      });
      expect(res.status, kind).toBe(422);
      expect(await res.text()).toMatch(/id="kind-error"><span class="sr">Error: <\/span>cannot be changed/);
    }
    expect(stored(h, id)).toEqual(before);
    // An HTTPS endpoint has no destination form.
    const https = await h.api(token, "/webhooks", {
      method: "POST",
      body: JSON.stringify({ url: "http://127.0.0.1:9/hook", events: ["message.delivered"] }),
    });
    const httpsId = ((await https.json()) as { id: string }).id;
    expect(await (await b.get(`/console/endpoints/${httpsId}`)).text()).not.toContain('id="h-destination"');
    const posted = await b.post(`/console/endpoints/${httpsId}/destination`, { _csrf: csrf, kind: "kafka" });
    expect(posted.status).toBe(404);
  });

  it("lets a portal session change its endpoint's destination the same way", async () => {
    const h = await makeConsoleHarness();
    const { token } = await h.newToken();
    const id = await make(h, token, "rabbitmq");
    const link = (await (
      await h.api(token, "/portal-sessions", { method: "POST", body: JSON.stringify({ webhook_ids: [id] }) })
    ).json()) as { url: string };
    const p = h.browser("herald_portal");
    await p.get(pathOf(link.url));
    const page = await (await p.get(`/portal/endpoints/${id}`)).text();
    expect(page).not.toContain(AMQP_PW);
    const res = await p.post(`/portal/endpoints/${id}/destination`, {
      ...formOf(page),
      rabbitmq_exchange: "billing",
    });
    expect(res.status).toBe(303);
    const d = stored(h, id);
    expect(d.kind === "rabbitmq" && d.exchange).toBe("billing");
    expect(d.kind === "rabbitmq" && (await open(h, d.password))).toBe(AMQP_PW);
  });
});
