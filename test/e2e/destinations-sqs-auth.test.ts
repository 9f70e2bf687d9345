import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unwrap, type WebhookWithSecret } from "../../clients/typescript/client.ts";
import type { BrokerServer } from "../support/broker-server.ts";
import {
  brokerTitle,
  type DestinationSystem,
  destinationSystem,
  expectCredentialsHidden,
  expectNothingLost,
  logLines,
} from "../support/destination-system.ts";
import { eventOf } from "../support/destinations-e2e.ts";
import { type SqsAuthGateway, startSqsAuthGateway } from "../support/sqs-auth-gateway.ts";
import { sqsUnavailable, startSqs } from "../support/sqs-server.ts";
import { type SqsTail, sqsAction, startSqsTail } from "../support/sqs-tail.ts";
import { allDeliveries, waitUntil } from "./delivery-support.ts";

// Issue 28 from outside, SQS credentials refused: ElasticMQ (scripts/sqs.sh) checks no signature, so a
// gateway that checks SigV4 as AWS's front door does (test/support/sqs-auth-gateway.ts) stands before it.
// Two endpoints made through the API with the script's own credentials (which Herald must accept), one
// with a key id the gateway does not know, one with a wrong secret: their attempts fail as auth_error, are
// retried, each logged as a failed broker attempt; once the credentials are put right by PATCH every event
// arrives, none lost. No secret appears in any answer or anywhere in Herald's log (debug level).
const missing = sqsUnavailable();
const title = brokerTitle("an SQS server", missing);

const WRONG_KEY_ID = "AKIAHERALDWRONGKEY23";
const WRONG_SECRET = "sqs-Wr0ngSecret-e2e-3e9a/Q+";
const EVENTS = 3;

describe.skipIf(missing)(`SQS refused credentials, whole system${title}`, () => {
  let sqs: BrokerServer;
  let gateway: SqsAuthGateway;
  let system: DestinationSystem;
  const tails: SqsTail[] = [];
  let unknownKey: WebhookWithSecret;
  let wrongSecret: WebhookWithSecret;
  let keyId = "";
  let secret = "";

  beforeAll(async () => {
    sqs = await startSqs();
    const server = sqs.env.SQS_ENDPOINT ?? "";
    keyId = sqs.env.AWS_ACCESS_KEY_ID ?? "";
    secret = sqs.env.AWS_SECRET_ACCESS_KEY ?? "";
    gateway = await startSqsAuthGateway(server, { [keyId]: secret });
    system = await destinationSystem("e2e_dest_sqs_auth", [randomUUID()], {
      HERALD_LOG_LEVEL: "debug",
      HERALD_DELIVERY_TIMEOUT: "3s",
      HERALD_ALLOW_HTTP_URLS: "true",
      HERALD_RETRY_SCHEDULE: Array.from({ length: 60 }, () => "500ms").join(","),
    });
    const create = async (name: string, credentials: Record<string, string>) => {
      const queueUrl = String(
        (await sqsAction(server, "CreateQueue", { QueueName: `e2e-auth-${name}-${Date.now()}` })).QueueUrl,
      );
      tails.push(startSqsTail(server, queueUrl));
      const region = sqs.env.SQS_REGION ?? "us-east-1";
      return system.create({
        kind: "sqs",
        sqs: { queue_url: queueUrl, region, endpoint_url: gateway.url, ...credentials },
      });
    };
    // The script's default key id is AWS's form: Herald accepts it (a 422 here otherwise).
    unknownKey = await create("key", { access_key_id: WRONG_KEY_ID, secret_access_key: secret });
    wrongSecret = await create("secret", { access_key_id: keyId, secret_access_key: WRONG_SECRET });
  });

  afterAll(async () => {
    for (const t of tails) await t.close();
    await system?.close();
    await gateway?.close();
    await sqs?.close();
  });

  it("fails refused credentials as auth_error, retries them and logs each, naming no secret", async () => {
    const { client, herald } = system;
    await system.publish(EVENTS);
    for (const endpoint of [unknownKey, wrongSecret]) {
      await waitUntil(
        async () =>
          (await allDeliveries(client, endpoint.id, "failed")).some(
            (d) => d.attempt >= 2 && d.error === "auth_error",
          ),
        () => `a second auth_error attempt of ${endpoint.id}`,
      );
      const failed = await allDeliveries(client, endpoint.id, "failed");
      for (const d of failed) expect(d.error).toBe("auth_error");
      const logged = logLines(herald, "broker delivery attempt failed").filter(
        (l) => l.webhook_id === endpoint.id,
      );
      expect(logged.length).toBeGreaterThanOrEqual(2);
      for (const l of logged) expect(l).toMatchObject({ level: "warn", kind: "sqs", error: "auth_error" });
    }
    const refusals = (id: string, type: string) =>
      gateway.calls.some((c) => c.keyId === id && c.refused === type);
    expect(refusals(WRONG_KEY_ID, "UnrecognizedClientException")).toBe(true);
    expect(refusals(keyId, "InvalidSignatureException")).toBe(true);
    expect(tails.flatMap((t) => t.records)).toEqual([]);
  });

  it("delivers every event once the credentials are put right, none lost", async () => {
    const { client } = system;
    const patch = (id: string, sqsFields: Record<string, string>) =>
      unwrap(
        client.PATCH("/api/v1/webhooks/{id}", {
          params: { path: { id } },
          body: { sqs: sqsFields } as never,
        }),
      );
    await patch(unknownKey.id, { access_key_id: keyId });
    await patch(wrongSecret.id, { secret_access_key: secret });
    for (const [i, endpoint] of [unknownKey, wrongSecret].entries()) {
      const tail = tails[i]!;
      const read = () => new Set(tail.records.map(eventOf));
      await waitUntil(
        () => read().size === EVENTS,
        () => `${read().size} of ${EVENTS} consumed for ${endpoint.id}`,
      );
      expect([...read()].sort()).toEqual(system.ids());
      expectNothingLost(await allDeliveries(client, endpoint.id), system.ids(), ["auth_error"]);
    }
  });

  it("shows neither secret in any answer or log line", async () => {
    await expectCredentialsHidden(system, [unknownKey.id, wrongSecret.id], [secret, WRONG_SECRET], keyId, [
      JSON.stringify(unknownKey),
      JSON.stringify(wrongSecret),
    ]);
  });
});
