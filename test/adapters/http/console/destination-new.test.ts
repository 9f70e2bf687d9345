import { describe, expect, it } from "vitest";
import type { BrokerDestination } from "../../../../src/domain/destination.ts";
import { makeConsoleHarness } from "./console-harness.ts";

// The new endpoint form creates a Kafka, RabbitMQ or SQS endpoint through the use case the API uses
// (ADR 27): the kind's boxes, each bad input's issue beside its field with nothing created, and the
// credentials typed never in any page (not even the form shown again after an error) nor in a log.

const SASL_PW = "form-sasl-pw-7d1c 2";
const AMQP_PW = "form-amqp-pw-93ae";
const SQS_SECRET = "form-sqs-secret-0f5b";
const SQS_TOKEN = "form-sqs-token-c62d";
const CREDENTIALS = [SASL_PW, AMQP_PW, encodeURIComponent(AMQP_PW), SQS_SECRET, SQS_TOKEN];

type Harness = Awaited<ReturnType<typeof makeConsoleHarness>>;
type Browser = Awaited<ReturnType<Harness["signedIn"]>>["b"];

const FORMS: Record<"kafka" | "rabbitmq" | "sqs", Record<string, string>> = {
  kafka: {
    kind: "kafka",
    kafka_brokers: "127.0.0.1:9092,\n 127.0.0.2:9093 \n",
    kafka_topic: "orders",
    kafka_key: "endpoint",
    kafka_tls: "off",
    kafka_sasl_mechanism: "scram-sha-512",
    kafka_sasl_username: "herald",
    kafka_sasl_password: SASL_PW,
  },
  rabbitmq: {
    kind: "rabbitmq",
    rabbitmq_url: `amqp://herald:${AMQP_PW}@127.0.0.1:5672/prod`,
    rabbitmq_exchange: "events",
    rabbitmq_routing_key: "orders.created",
  },
  sqs: {
    kind: "sqs",
    sqs_queue_url: "http://127.0.0.1:9324/000000000000/orders.fifo",
    sqs_region: "elasticmq",
    sqs_access_key_id: "AKIDFORM1",
    sqs_secret_access_key: SQS_SECRET,
    sqs_session_token: SQS_TOKEN,
    sqs_endpoint_url: "http://127.0.0.1:9324",
    sqs_key: "resource",
  },
};

/** What each form stores, its credentials opened. */
const STORED: Record<keyof typeof FORMS, BrokerDestination<string>> = {
  kafka: {
    kind: "kafka",
    brokers: ["127.0.0.1:9092", "127.0.0.2:9093"],
    topic: "orders",
    key: "endpoint",
    tls: false,
    sasl: { mechanism: "scram-sha-512", username: "herald", password: SASL_PW },
  },
  rabbitmq: {
    kind: "rabbitmq",
    url: "amqp://herald@127.0.0.1:5672/prod",
    password: AMQP_PW,
    exchange: "events",
    routingKey: "orders.created",
  },
  sqs: {
    kind: "sqs",
    queueUrl: "http://127.0.0.1:9324/000000000000/orders.fifo",
    region: "elasticmq",
    accessKeyId: "AKIDFORM1",
    secretAccessKey: SQS_SECRET,
    sessionToken: SQS_TOKEN,
    endpointUrl: "http://127.0.0.1:9324",
    key: "resource",
  },
};

/** The stored destination of an endpoint with its credentials opened. */
async function opened(h: Harness, id: string): Promise<BrokerDestination<string> | null> {
  const d = h.repos.endpoints.rows.get(id)?.destination ?? null;
  if (!d) return null;
  const open = (s: string) => h.cipher.open(s);
  if (d.kind === "kafka")
    return { ...d, sasl: d.sasl && { ...d.sasl, password: await open(d.sasl.password) } };
  if (d.kind === "rabbitmq") return { ...d, password: d.password && (await open(d.password)) };
  return {
    ...d,
    secretAccessKey: await open(d.secretAccessKey),
    sessionToken: d.sessionToken && (await open(d.sessionToken)),
  };
}

/** Every page a person would see around a form, read into `pages`. */
async function read(b: Browser, pages: string[], path: string): Promise<string> {
  const text = await (await b.get(path)).text();
  pages.push(text);
  return text;
}

function expectNoCredential(h: Harness, pages: string[]) {
  for (const text of [...pages, h.logLines.join("\n")])
    for (const c of CREDENTIALS) expect(text).not.toContain(c);
}

/** The issue shown beside a field: the paragraph the box points at. */
function besideField(page: string, name: string): string {
  expect(page).toContain(`id="${name}" name="${name}"`);
  expect(page).toMatch(new RegExp(`name="${name}"[^>]*aria-describedby="${name}-error"`));
  return (
    new RegExp(
      `<p class="field-error" id="${name}-error">([^<]*<span class="sr">Error: </span>)?([^<]*)</p>`,
    ).exec(page)?.[2] ?? ""
  );
}

describe("console: creating a broker endpoint", () => {
  it("offers the kind with HTTPS chosen, each kind's boxes, and password boxes for credentials", async () => {
    const h = await makeConsoleHarness();
    const { b } = await h.signedIn();
    const form = await (await b.get("/console/endpoints/new")).text();
    expect(form).toContain('<input type="radio" name="kind" value="https" checked />');
    for (const k of ["kafka", "rabbitmq", "sqs"]) expect(form).toContain(`name="kind" value="${k}" />`);
    for (const name of [
      "kafka_sasl_password",
      "rabbitmq_password",
      "sqs_secret_access_key",
      "sqs_session_token",
    ])
      expect(form).toMatch(new RegExp(`name="${name}" type="password"`));
    const kafka = await (await b.get("/console/endpoints/new?kind=kafka")).text();
    expect(kafka).toContain('<input type="radio" name="kind" value="kafka" checked />');
  });

  for (const kind of ["kafka", "rabbitmq", "sqs"] as const) {
    it(`creates a ${kind} endpoint from the form; no page and no log holds its credentials`, async () => {
      const h = await makeConsoleHarness();
      const { b } = await h.signedIn();
      const pages: string[] = [];
      await read(b, pages, `/console/endpoints/new?kind=${kind}`);
      const created = await b.post("/console/endpoints", {
        _csrf: await b.csrf(),
        ...FORMS[kind],
        // The other kinds' boxes as a page without its script sends them: empty, and not read.
        ...(kind === "kafka" ? {} : { kafka_brokers: "", kafka_topic: "" }),
        url: "",
        events: ["message.delivered"],
      });
      expect(created.status).toBe(303);
      pages.push(await (await b.follow(created)).text());
      const [e] = [...h.repos.endpoints.rows.values()];
      expect(await opened(h, e!.id)).toEqual(STORED[kind]);
      const page = await read(b, pages, `/console/endpoints/${e!.id}`);
      expect(page).toContain(`<dt>Kind</dt><dd><code>${kind}</code>`);
      await read(b, pages, "/console");
      expectNoCredential(h, pages);
    });
  }

  const BAD: [keyof typeof FORMS, Record<string, string>, string, RegExp][] = [
    [
      "kafka",
      { kafka_brokers: "127.0.0.1:9092\nnot a broker" },
      "kafka_brokers",
      /^line 2: must be host:port/,
    ],
    ["kafka", { kafka_topic: "no spaces" }, "kafka_topic", /^must be 1-249 of letters/],
    ["kafka", { kafka_sasl_password: "********" }, "kafka_sasl_password", /not the mask/],
    ["kafka", { kafka_tls_ca: "-----BEGIN CERTIFICATE-----" }, "kafka_tls_ca", /^is only used with TLS/],
    ["kafka", { kafka_tls: "ca", kafka_tls_ca: "not a pem" }, "kafka_tls_ca", /^must be PEM certificates/],
    ["kafka", { kafka_sasl_mechanism: "none" }, "kafka_sasl_mechanism", /^must be chosen for a SASL/],
    [
      "rabbitmq",
      { rabbitmq_exchange: "bad exchange!" },
      "rabbitmq_exchange",
      /^must be at most 255 of letters/,
    ],
    ["rabbitmq", { rabbitmq_password: "given-twice" }, "rabbitmq_password", /is given twice/],
    ["sqs", { sqs_region: "EU WEST" }, "sqs_region", /^must be a region name/],
    ["sqs", { sqs_secret_access_key: "" }, "sqs_secret_access_key", /^must be 1-4096 characters/],
  ];
  for (const [kind, change, name, message] of BAD) {
    it(`shows a bad ${name} beside its box, creates nothing, and asks for the credentials again`, async () => {
      const h = await makeConsoleHarness();
      const { b } = await h.signedIn();
      const res = await b.post("/console/endpoints", {
        _csrf: await b.csrf(),
        ...FORMS[kind],
        ...change,
        description: "typed before the error",
        events: ["message.delivered"],
      });
      expect(res.status).toBe(422);
      const page = await res.text();
      expect(besideField(page, name)).toMatch(message);
      expect(h.repos.endpoints.rows.size).toBe(0);
      // What was typed is there again, the kind still chosen, every password box empty.
      expect(page).toContain(`<input type="radio" name="kind" value="${kind}" checked />`);
      expect(page).toContain('value="typed before the error"');
      expect(page).not.toMatch(/type="password"[^>]*value=/);
      expectNoCredential(h, [page]);
      expect(page).not.toContain("given-twice");
    });
  }

  it("shows the URL's issue beside it for HTTPS, and an unknown kind beside the kind", async () => {
    const h = await makeConsoleHarness();
    const { b } = await h.signedIn();
    const csrf = await b.csrf();
    const https = await b.post("/console/endpoints", {
      _csrf: csrf,
      url: "ftp://x",
      events: "message.delivered",
    });
    expect(https.status).toBe(422);
    expect(besideField(await https.text(), "url")).toMatch(/^must/);
    const odd = await b.post("/console/endpoints", {
      _csrf: csrf,
      kind: "smtp",
      events: "message.delivered",
    });
    expect(odd.status).toBe(422);
    expect(await odd.text()).toContain(
      '<p class="field-error" id="kind-error"><span class="sr">Error: </span>must be one of https, kafka, rabbitmq, sqs</p>',
    );
    expect(h.repos.endpoints.rows.size).toBe(0);
  });
});
