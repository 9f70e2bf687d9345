import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSqsSender } from "../../src/adapters/destinations/sqs.ts";
import { parseEgressProxy } from "../../src/domain/egress-proxy.ts";
import { BROKERS_REQUIRED, type BrokerServer } from "../support/broker-server.ts";
import { type ConnectProxy, startConnectProxy } from "../support/connect-proxy.ts";
import { sqsCall, sqsUnavailable, startSqs } from "../support/sqs-server.ts";
import { brokerRequest } from "./helpers.ts";

// SQS calls through HERALD_DELIVERY_PROXY (ADR 21, 27): a CONNECT tunnel to the address Herald resolved
// and checked, as HTTPS deliveries go; a refused address never reaches the proxy.
const missing = sqsUnavailable();
if (missing && BROKERS_REQUIRED) throw new Error(`CI needs an SQS-compatible server: ${missing}`);

describe.skipIf(missing)(
  `the SQS sender through the egress proxy${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    let sqs: BrokerServer;
    let proxy: ConnectProxy;
    beforeAll(async () => {
      [sqs, proxy] = await Promise.all([startSqs(), startConnectProxy()]);
    });
    afterAll(async () => {
      await Promise.all([sqs?.close(), proxy?.close()]);
    });

    it("tunnels SendMessage through the proxy to the checked address, and refuses a private one before it", async () => {
      const queueUrl = String(
        (await sqsCall(sqs.env, "CreateQueue", { QueueName: `proxied-${Date.now()}` })).QueueUrl,
      );
      const port = new URL(sqs.env.SQS_ENDPOINT ?? "").port;
      const route = { proxy: parseEgressProxy(proxy.url), noProxy: [] };
      const destination = {
        kind: "sqs" as const,
        queueUrl,
        region: sqs.env.SQS_REGION ?? "us-east-1",
        accessKeyId: sqs.env.AWS_ACCESS_KEY_ID ?? "",
        secretAccessKey: sqs.env.AWS_SECRET_ACCESS_KEY ?? "",
        sessionToken: null,
        endpointUrl: `http://sqs.internal.test:${port}`,
        key: "resource" as const,
      };
      const lookup = async () => [{ address: "127.0.0.1", family: 4 }];
      const allowed = createSqsSender({
        timeoutMs: 10_000,
        allowPrivateNetworks: true,
        lookup,
        proxy: route,
      });
      const guarded = createSqsSender({
        timeoutMs: 10_000,
        allowPrivateNetworks: false,
        lookup,
        proxy: route,
      });
      try {
        const sent = await allowed.send(brokerRequest(destination));
        expect(sent).toMatchObject({ ok: true, error: null });
        // Herald resolved the name; the proxy was asked for the address, GetQueueAttributes then SendMessage.
        expect(proxy.requests.map((r) => [r.method, r.target])).toEqual([
          ["CONNECT", `127.0.0.1:${port}`],
          ["CONNECT", `127.0.0.1:${port}`],
        ]);
        const answer = await sqsCall(sqs.env, "ReceiveMessage", { QueueUrl: queueUrl, WaitTimeSeconds: 5 });
        expect((answer.Messages as { MessageId: string }[] | undefined)?.map((m) => m.MessageId)).toEqual([
          sent.receipt?.message_id,
        ]);

        const refused = await guarded.send(brokerRequest(destination));
        expect(refused).toMatchObject({ ok: false, error: "blocked_address" });
        expect(proxy.requests).toHaveLength(2);
      } finally {
        await Promise.all([allowed.close(), guarded.close()]);
      }
    });
  },
);
