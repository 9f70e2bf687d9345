import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unwrap, type WebhookWithSecret } from "../../clients/typescript/client.ts";
import { BROKERS_REQUIRED, type BrokerServer } from "../support/broker-server.ts";
import { eventOf, everyAnswer, expectNoCredential, publishAbout } from "../support/destinations-e2e.ts";
import type { HeraldProcess } from "../support/herald-process.ts";
import { type SqsAuthGateway, startSqsAuthGateway } from "../support/sqs-auth-gateway.ts";
import { sqsUnavailable, startSqs } from "../support/sqs-server.ts";
import { type SqsTail, sqsAction, startSqsTail } from "../support/sqs-tail.ts";
import { allDeliveries, type DeliveryWorld, deliveryWorld, waitUntil } from "./delivery-support.ts";

// Issue 28 from outside, SQS credentials refused: ElasticMQ (scripts/sqs.sh) checks no signature, so a
// gateway that checks SigV4 as AWS's front door does (test/support/sqs-auth-gateway.ts) stands before it.
// Two endpoints made through the API with the script's own credentials (which Herald must accept), one
// with a key id the gateway does not know, one with a wrong secret: their attempts fail as auth_error, are
// retried, each logged as a failed broker attempt; once the credentials are put right by PATCH every event
// arrives, none lost. No secret appears in any answer or anywhere in Herald's log (debug level).
const missing = sqsUnavailable();
if (missing && BROKERS_REQUIRED) throw new Error(`CI needs an SQS server: ${missing}`);

const WRONG_KEY_ID = "AKIAHERALDWRONGKEY23";
const WRONG_SECRET = "sqs-Wr0ngSecret-e2e-3e9a/Q+";
const EVENTS = 3;

describe.skipIf(missing)(
  `SQS refused credentials, whole system${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    let sqs: BrokerServer;
    let gateway: SqsAuthGateway;
    let world: DeliveryWorld;
    let herald: HeraldProcess;
    const tails: SqsTail[] = [];
    let unknownKey: WebhookWithSecret;
    let wrongSecret: WebhookWithSecret;
    const published: string[] = [];
    let keyId = "";
    let secret = "";

    beforeAll(async () => {
      sqs = await startSqs();
      const server = sqs.env.SQS_ENDPOINT ?? "";
      keyId = sqs.env.AWS_ACCESS_KEY_ID ?? "";
      secret = sqs.env.AWS_SECRET_ACCESS_KEY ?? "";
      gateway = await startSqsAuthGateway(server, { [keyId]: secret });
      world = await deliveryWorld("e2e_dest_sqs_auth", {
        HERALD_LOG_LEVEL: "debug",
        HERALD_DELIVERY_TIMEOUT: "3s",
        HERALD_ALLOW_HTTP_URLS: "true",
        HERALD_RETRY_SCHEDULE: Array.from({ length: 60 }, () => "500ms").join(","),
      });
      herald = await world.start();
      const create = async (name: string, sqsFields: Record<string, string>) => {
        const queueUrl = String(
          (await sqsAction(server, "CreateQueue", { QueueName: `e2e-auth-${name}-${Date.now()}` })).QueueUrl,
        );
        tails.push(startSqsTail(server, queueUrl));
        return (await unwrap(
          world.client(herald.baseUrl).POST("/api/v1/webhooks", {
            body: {
              kind: "sqs",
              sqs: {
                queue_url: queueUrl,
                region: sqs.env.SQS_REGION ?? "us-east-1",
                endpoint_url: gateway.url,
                ...sqsFields,
              },
              events: ["message.delivered"],
            } as never,
          }),
        )) as WebhookWithSecret;
      };
      // The script's default key id is AWS's form: Herald accepts it (a 422 here otherwise).
      unknownKey = await create("key", { access_key_id: WRONG_KEY_ID, secret_access_key: secret });
      wrongSecret = await create("secret", { access_key_id: keyId, secret_access_key: WRONG_SECRET });
    });

    afterAll(async () => {
      for (const t of tails) await t.close();
      await world?.close();
      await gateway?.close();
      await sqs?.close();
    });

    const logLines = () =>
      herald
        .output()
        .split("\n")
        .filter((l) => l.includes('"msg":"broker delivery attempt failed"'))
        .map((l) => JSON.parse(l.slice(l.indexOf("{"))) as Record<string, unknown>);

    it("fails refused credentials as auth_error, retries them and logs each, naming no secret", async () => {
      const client = world.client(herald.baseUrl);
      for (let i = 0; i < EVENTS; i++)
        published.push(await publishAbout(herald.baseUrl, world.token, randomUUID()));
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
        const logged = logLines().filter((l) => l.webhook_id === endpoint.id);
        expect(logged.length).toBeGreaterThanOrEqual(2);
        for (const l of logged) expect(l).toMatchObject({ level: "warn", kind: "sqs", error: "auth_error" });
      }
      expect(
        gateway.calls.some((c) => c.keyId === WRONG_KEY_ID && c.refused === "UnrecognizedClientException"),
      ).toBe(true);
      expect(gateway.calls.some((c) => c.keyId === keyId && c.refused === "InvalidSignatureException")).toBe(
        true,
      );
      expect(tails.flatMap((t) => t.records)).toEqual([]);
    });

    it("delivers every event once the credentials are put right, none lost", async () => {
      const client = world.client(herald.baseUrl);
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
        await waitUntil(
          () => new Set(tail.records.map(eventOf)).size === EVENTS,
          () => `${tail.records.length} of ${EVENTS} consumed for ${endpoint.id}`,
        );
        expect([...new Set(tail.records.map(eventOf))].sort()).toEqual([...published].sort());
        const deliveries = await allDeliveries(client, endpoint.id);
        for (const id of published) {
          const ofEvent = deliveries.filter((d) => d.event_id === id);
          const succeeded = ofEvent.filter((d) => d.status === "succeeded");
          expect(succeeded, `the succeeded attempt of ${id}`).toHaveLength(1);
          for (const f of ofEvent.filter((d) => d.status === "failed")) {
            expect(f.error).toBe("auth_error");
            expect(f.attempt).toBeLessThan(succeeded[0]!.attempt);
          }
        }
      }
    });

    it("shows neither secret in any answer or log line", async () => {
      const answers = await everyAnswer(herald.baseUrl, world.token, [unknownKey.id, wrongSecret.id]);
      expect(answers.join("\n")).toContain(keyId);
      expectNoCredential(
        {
          "the API's answers": [...answers, JSON.stringify(unknownKey), JSON.stringify(wrongSecret)],
          "Herald's log": [herald.output()],
        },
        [secret, WRONG_SECRET],
      );
      expect(herald.output()).toContain(`/api/v1/webhooks/${wrongSecret.id}/deliveries`);
    });
  },
);
