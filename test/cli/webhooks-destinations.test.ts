import { describe, expect, it } from "vitest";
import type { Webhook } from "../../clients/typescript/client.ts";
import { argv, cliHarness } from "./helpers.ts";

// `herald webhooks create --kind ...` (ADR 27): a broker endpoint from options, credentials from the
// environment (never an argument), shown masked by `create` and `get`.
const PASSWORD = "cli-broker-password-2a7c";
const SQS_SECRET = "cli-sqs-secret-9f31";

describe("herald webhooks create --kind", () => {
  it("creates a Kafka endpoint with SASL, the password from HERALD_DESTINATION_PASSWORD, and get prints its kind", async () => {
    const cli = await cliHarness();
    const run = await cli.run(
      argv(
        "webhooks create --kind kafka --brokers b1.example.com:9092,b2.example.com:9092 --topic orders --key endpoint --sasl-mechanism scram-sha-512 --sasl-username herald --events message.delivered",
      ),
      { HERALD_DESTINATION_PASSWORD: PASSWORD },
    );
    expect(run.err).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^kind +kafka$/m);
    expect(run.stdout).toMatch(/^url +kafka:\/\/b1\.example\.com:9092,b2\.example\.com:9092\/orders$/m);
    expect(run.stdout).toContain("sasl scram-sha-512, user herald, password ********");
    const { data } = await cli.client.GET("/api/v1/webhooks");
    const w = data!.data[0]!;
    expect(w).toMatchObject({
      kind: "kafka",
      kafka: { key: "endpoint", tls: true, sasl: { username: "herald" } },
    });
    const got = await cli.run(["webhooks", "get", w.id]);
    expect(got.stdout).toMatch(/^kind +kafka$/m);
    expect(got.stdout).toContain("topic orders");
    for (const text of [run.stdout, got.stdout, cli.api.logLines.join("\n")])
      expect(text).not.toContain(PASSWORD);
  });

  it("creates a RabbitMQ endpoint and an SQS endpoint", async () => {
    const cli = await cliHarness();
    const rabbit = await cli.run(
      argv(
        "webhooks create --kind rabbitmq --amqp-url amqps://herald@mq.example.com/prod --exchange events --routing-key orders --events message.delivered --json",
      ),
      { HERALD_DESTINATION_PASSWORD: PASSWORD },
    );
    expect(rabbit.code).toBe(0);
    expect(rabbit.json<Webhook>()).toMatchObject({
      kind: "rabbitmq",
      url: "amqps://herald@mq.example.com/prod?exchange=events&routing_key=orders",
      rabbitmq: { password: "********" },
    });
    const sqs = await cli.run(
      argv(
        "webhooks create --kind sqs --queue-url https://sqs.eu-west-1.amazonaws.com/123456789012/orders --region eu-west-1 --access-key-id AKIAIOSFODNN7EXAMPLE --events message.delivered --json",
      ),
      { HERALD_SQS_SECRET_ACCESS_KEY: SQS_SECRET },
    );
    expect(sqs.code).toBe(0);
    expect(sqs.json<Webhook>()).toMatchObject({
      kind: "sqs",
      sqs: { secret_access_key: "********", session_token: null },
    });
    for (const text of [rabbit.stdout, sqs.stdout]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(SQS_SECRET);
    }
  });

  it("refuses mixed or missing options as usage errors (exit 2), and passes the API's 422 on", async () => {
    const cli = await cliHarness();
    const cases: [string[], Record<string, string>, string][] = [
      [["--kind", "kafka", "--topic", "t", "--events", "message.sent"], {}, "--kind kafka needs --brokers"],
      [["--kind", "kafka", "--brokers", "b:1", "--events", "message.sent"], {}, "--kind kafka needs --topic"],
      [
        argv("--kind kafka --brokers b:1 --topic t --url https://x.example.com --events message.sent"),
        {},
        "--url is not an option of --kind kafka",
      ],
      [
        argv("--kind kafka --brokers b:1 --topic t --queue-url https://q --events message.sent"),
        {},
        "--queue-url is not an option of --kind kafka",
      ],
      [
        argv(
          "--kind kafka --brokers b:1 --topic t --sasl-mechanism plain --sasl-username u --events message.sent",
        ),
        {},
        "SASL needs the password in HERALD_DESTINATION_PASSWORD",
      ],
      [
        argv(
          "--kind sqs --queue-url https://q.example.com/1/q --region r --access-key-id k --events message.sent",
        ),
        {},
        "--kind sqs needs the secret access key in HERALD_SQS_SECRET_ACCESS_KEY",
      ],
      [["--kind", "kinesis", "--events", "message.sent"], {}, "--kind must be https, kafka, rabbitmq or sqs"],
      [
        ["--url", "https://x.example.com", "--topic", "t", "--events", "message.sent"],
        {},
        "--topic is not an option of --kind https",
      ],
    ];
    for (const [args, env, message] of cases) {
      const run = await cli.run(["webhooks", "create", ...args], env);
      expect(run.code, message).toBe(2);
      expect(run.err.join("\n")).toContain(message);
    }
    const bad = await cli.run(
      argv("webhooks create --kind kafka --brokers 127.0.0.1:9092 --topic t --events message.sent"),
    );
    expect(bad.code).toBe(1);
    expect(bad.err.join("\n")).toContain("body.kafka.brokers.0");
  });

  it("update patches the destination: options of its kind, the password only with --password-from-env", async () => {
    const cli = await cliHarness();
    const made = await cli.run(
      argv(
        "webhooks create --kind kafka --brokers b1.example.com:9092 --topic orders --events message.sent --json",
      ),
    );
    const { id } = made.json<Webhook>();
    const env = { HERALD_DESTINATION_PASSWORD: PASSWORD };
    const up = await cli.run(["webhooks", "update", id, "--topic", "orders.v2", "--no-tls", "--json"], env);
    expect(up.code).toBe(0);
    // The variable alone changes nothing: SASL stays off.
    expect(up.json<Webhook>()).toMatchObject({
      url: "kafka://b1.example.com:9092/orders.v2",
      kafka: { tls: false, sasl: null },
    });
    const sasl = await cli.run(
      ["webhooks", "update", id, "--sasl-mechanism", "plain", "--sasl-username", "u", "--password-from-env"],
      env,
    );
    expect(sasl.code).toBe(0);
    expect(sasl.stdout).toContain("sasl plain, user u, password ********");
    expect(sasl.stdout).not.toContain(PASSWORD);
    const mixed = await cli.run([
      "webhooks",
      "update",
      id,
      "--topic",
      "t",
      "--queue-url",
      "https://q.example.com/1/q",
    ]);
    expect(mixed.code).toBe(2);
    expect(mixed.err.join("\n")).toContain("options of kafka and sqs exclude each other");
    const other = await cli.run(["webhooks", "update", id, "--exchange", "e"]);
    expect(other.code).toBe(1);
    expect(other.err.join("\n")).toContain("body.rabbitmq");
  });
});
