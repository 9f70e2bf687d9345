import { describe, expect, it } from "vitest";
import type { Repositories } from "../../../src/app/ports/store.ts";
import type { BrokerDestination } from "../../../src/domain/destination.ts";
import { aDelivery, allPages, anEndpoint, at, newScope } from "./fixtures.ts";

// Broker destinations (ADR 27) as every store must keep them: each kind round-trips exactly (credentials
// as the sealed text given), a patch replaces the destination, and a delivery keeps its broker's receipt.
const KAFKA: BrokerDestination = {
  kind: "kafka",
  brokers: ["b1.example.com:9092", "[2001:db8::1]:9093"],
  topic: "orders.v1",
  key: "endpoint",
  tls: { ca: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n" },
  sasl: { mechanism: "scram-sha-512", username: "herald", password: "sealed:kafka" },
};
const KAFKA_PLAIN: BrokerDestination = { ...KAFKA, tls: false, sasl: null, key: "resource" };
const RABBITMQ: BrokerDestination = {
  kind: "rabbitmq",
  url: "amqps://herald@mq.example.com:5671/prod",
  password: "sealed:amqp",
  exchange: "",
  routingKey: "orders",
};
const SQS: BrokerDestination = {
  kind: "sqs",
  queueUrl: "https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo",
  region: "eu-west-1",
  accessKeyId: "AKIAIOSFODNN7EXAMPLE",
  secretAccessKey: "sealed:sqs-secret",
  sessionToken: "sealed:sqs-token",
  endpointUrl: "https://sqs.example.com",
  key: "resource",
};

export function destinationContract(store: () => Repositories): void {
  describe("broker destinations", () => {
    it("returns an endpoint of each kind exactly as it was given, by get, getMany, list and listSubscribed", async () => {
      const scope = newScope();
      const all = [
        KAFKA,
        KAFKA_PLAIN,
        RABBITMQ,
        { ...RABBITMQ, password: null },
        SQS,
        { ...SQS, sessionToken: null, endpointUrl: null },
      ].map((destination, i) => anEndpoint(scope, { destination, url: `dest://${i}`, createdAt: at(i) }));
      const https = anEndpoint(scope, { createdAt: at(10) });
      for (const e of [...all, https]) await store().endpoints.insert(e);
      for (const e of [...all, https]) expect(await store().endpoints.get(scope, e.id)).toEqual(e);
      const many = await store().endpoints.getMany(all.map((e) => e.id));
      expect(new Map(many.map((e) => [e.id, e.destination]))).toEqual(
        new Map(all.map((e) => [e.id, e.destination])),
      );
      const listed = (await allPages(3, (page) => store().endpoints.list(scope, {}, page))).pages.flat();
      expect(listed.find((e) => e.id === all[4]!.id)?.destination).toEqual(SQS);
      expect(listed.find((e) => e.id === https.id)?.destination).toBeNull();
      const subscribed = await store().endpoints.listSubscribed(scope, "message.delivered");
      expect(subscribed.find((e) => e.id === all[0]!.id)?.destination).toEqual(KAFKA);
    });

    it("replaces the destination and its url with a patch, and keeps both when a patch leaves them out", async () => {
      const scope = newScope();
      const e = anEndpoint(scope, { destination: KAFKA, url: "kafka://b1.example.com:9092/orders.v1" });
      await store().endpoints.insert(e);
      const next = {
        ...KAFKA,
        topic: "t2",
        sasl: { mechanism: "plain", username: "u2", password: "sealed:kafka-2" },
      } as BrokerDestination;
      const changed = await store().endpoints.update(scope, e.id, {
        destination: next,
        url: "kafka://b1.example.com:9092/t2",
        updatedAt: at(1),
      });
      expect(changed?.destination).toEqual(next);
      await store().endpoints.update(scope, e.id, { description: "x", updatedAt: at(2) });
      const got = await store().endpoints.get(scope, e.id);
      expect([got?.destination, got?.url]).toEqual([next, "kafka://b1.example.com:9092/t2"]);
    });

    it("keeps a delivery's receipt as recorded; none on a failure, a pending record or a result that does not say", async () => {
      const scope = newScope();
      const [kafka, sqs, failed, silent, pending] = [0, 1, 2, 3, 4].map(() =>
        aDelivery(scope, { scheduledAt: at(0) }),
      );
      await store().deliveries.insertMany([kafka!, sqs!, failed!, silent!, pending!]);
      const outcome = {
        status: "succeeded" as const,
        responseStatus: null,
        responseBody: null,
        error: null,
        durationMs: 5,
        attemptedAt: at(10),
        nextAttemptAt: null,
        next: null,
      };
      const sqsReceipt = {
        message_id: "5fea7756-0ea4-451a-a703-a558b933e274",
        sequence_number: "18849496460467696128",
      };
      await store().deliveries.record([
        { ...outcome, id: kafka!.id, receipt: { partition: 2, offset: "42" } },
        { ...outcome, id: sqs!.id, receipt: sqsReceipt },
        { ...outcome, id: failed!.id, status: "failed", error: "unroutable", receipt: null },
        { ...outcome, id: silent!.id },
      ]);
      expect((await store().deliveries.get(scope, kafka!.id))?.receipt).toEqual({
        partition: 2,
        offset: "42",
      });
      expect((await store().deliveries.get(scope, sqs!.id))?.receipt).toEqual(sqsReceipt);
      for (const d of [failed!, silent!, pending!])
        expect((await store().deliveries.get(scope, d.id))?.receipt ?? null).toBeNull();
      const page = await store().deliveries.list(scope, kafka!.webhookId, {}, { limit: 10, cursor: null });
      expect(page.data.map((d) => d.receipt ?? null)).toEqual([{ partition: 2, offset: "42" }]);
    });
  });
}
