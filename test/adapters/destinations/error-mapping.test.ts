import { describe, expect, it } from "vitest";
import { withoutSecrets } from "../../../src/adapters/destinations/message-headers.ts";
import { amqpFailure } from "../../../src/adapters/destinations/rabbitmq-errors.ts";
import { amqpTarget } from "../../../src/adapters/destinations/rabbitmq-producer.ts";
import { createSqsSender } from "../../../src/adapters/destinations/sqs.ts";
import type { HttpPost } from "../../../src/adapters/destinations/sqs-http.ts";
import {
  isFifoQueue,
  md5OfAttributes,
  messageSize,
  sqsErrorType,
  sqsFailure,
  stringAttributes,
} from "../../../src/adapters/destinations/sqs-message.ts";
import { brokerRequest } from "../../destinations/helpers.ts";
import { md5OfStringAttributes } from "../../support/sqs-server.ts";

// How the broker senders name what went wrong, without a server: amqplib's errors as RabbitMQ words them,
// SQS's error answers (the AWS ones ElasticMQ cannot be made to give: refused credentials, throttling).

describe("amqpFailure", () => {
  const closed = (code: number, name: string, text: string) =>
    Object.assign(new Error(`Channel closed by server: ${code} (${name}) with message "${text}"`), { code });
  it.each([
    [closed(404, "NOT-FOUND", "NOT_FOUND - no exchange 'x' in vhost '/'"), "destination_not_found"],
    [closed(403, "ACCESS-REFUSED", "ACCESS_REFUSED - write access to exchange 'x' refused"), "auth_error"],
    [
      new Error(
        'Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN."',
      ),
      "auth_error",
    ],
    [
      new Error(
        'Handshake terminated by server: 530 (NOT-ALLOWED) with message "NOT_ALLOWED - vhost prod not found"',
      ),
      "destination_not_found",
    ],
    [
      new Error(
        "Handshake terminated by server: 530 (NOT-ALLOWED) with message \"NOT_ALLOWED - access to vhost 'prod' refused for user 'u'\"",
      ),
      "auth_error",
    ],
    [
      closed(
        406,
        "PRECONDITION-FAILED",
        "PRECONDITION_FAILED - message size 5054 is larger than configured max size 4096",
      ),
      "message_too_large",
    ],
    [closed(406, "PRECONDITION-FAILED", "PRECONDITION_FAILED - unknown delivery tag 1"), "broker_rejected"],
    [
      Object.assign(
        new Error(
          'Connection closed: 320 (CONNECTION-FORCED) with message "broker forced connection closure"',
        ),
        { code: 320 },
      ),
      "connection_error",
    ],
    [new Error("message nacked"), "broker_rejected"],
    [
      Object.assign(new Error("connect ECONNREFUSED 10.0.0.1:5672"), { code: "ECONNREFUSED" }),
      "connection_error",
    ],
    [Object.assign(new Error("getaddrinfo ENOTFOUND mq.example.test"), { code: "ENOTFOUND" }), "dns_error"],
    [Object.assign(new Error("refused"), { code: "EBLOCKEDADDRESS" }), "blocked_address"],
    [new Error("connect ETIMEDOUT"), "timeout"],
    [
      Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" }),
      "tls_error",
    ],
  ])("%s is %s", (err, code) => {
    expect(amqpFailure(err)).toBe(code);
  });
});

describe("amqpTarget", () => {
  it("reads user, host, port and vhost as amqplib would, the password kept apart", () => {
    expect(amqpTarget("amqps://herald@mq.example.com/prod", "pw")).toEqual({
      protocol: "amqps",
      host: "mq.example.com",
      port: 5671,
      username: "herald",
      password: "pw",
      vhost: "prod",
    });
    expect(amqpTarget("amqp://u%40x@[::1]:5673/%2f", null)).toMatchObject({
      host: "::1",
      port: 5673,
      username: "u@x",
      password: "",
      vhost: "/",
    });
    expect(amqpTarget("amqp://mq.example.com", null)).toMatchObject({
      username: undefined,
      password: undefined,
      vhost: "/",
    });
    expect(amqpTarget("https://mq.example.com/", null)).toBeNull();
    expect(amqpTarget("not a url", null)).toBeNull();
  });
});

describe("sqsFailure", () => {
  it.each([
    [400, "com.amazonaws.sqs#QueueDoesNotExist", "destination_not_found"],
    [400, "AWS.SimpleQueueService.NonExistentQueue", "destination_not_found"],
    [403, "com.amazon.coral.service#InvalidClientTokenId", "auth_error"],
    [403, "SignatureDoesNotMatch", "auth_error"],
    [403, "com.amazon.coral.service#AccessDeniedException", "auth_error"],
    [400, "com.amazon.coral.service#UnrecognizedClientException", "auth_error"],
    [400, "com.amazon.coral.service#InvalidSignatureException", "auth_error"],
    [400, "com.amazonaws.sqs#InvalidAttributeValue", "broker_rejected"],
    [400, "com.amazonaws.sqs#ThrottlingException", "connection_error"],
    [500, "com.amazonaws.sqs#InternalError", "connection_error"],
    [503, "", "connection_error"],
    [403, "", "auth_error"],
    [400, "", "broker_rejected"],
  ])("%i %s is %s", (status, type, code) => {
    expect(sqsFailure(status, sqsErrorType({ __type: type }))).toBe(code);
  });
});

describe("SQS messages", () => {
  it("counts body and attributes against the size limit, tells FIFO queues, and hashes attributes as SQS does", () => {
    const attributes = stringAttributes([["webhook-id", "msg_é"]]);
    expect(messageSize("ab", attributes)).toBe(2 + 10 + 6 + 6);
    expect(isFifoQueue("https://sqs.eu-west-1.amazonaws.com/1/orders.fifo")).toBe(true);
    expect(isFifoQueue("https://sqs.eu-west-1.amazonaws.com/1/orders")).toBe(false);
    // The tests' own implementation, which test/brokers/sqs.test.ts holds equal to ElasticMQ's answer.
    const three = stringAttributes([
      ["webhook-id", "msg_2hTu"],
      ["webhook-timestamp", "1700000000"],
      ["webhook-signature", "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="],
    ]);
    expect(md5OfAttributes(three)).toBe(md5OfStringAttributes(three));
    expect(withoutSecrets("key AKID secret s3cr3t and s3cr3t", ["s3cr3t", null])).toBe(
      "key AKID secret ******** and ********",
    );
  });

  it("names refused credentials auth_error, never shows the secret, and is never thrown at", async () => {
    const answers: Record<string, { status: number; body: string }> = {
      GetQueueAttributes: { status: 200, body: "{}" },
      SendMessage: {
        status: 403,
        body: JSON.stringify({
          __type: "com.amazon.coral.service#SignatureDoesNotMatch",
          message: "The request signature we calculated does not match (secret sk-9f8e7d)",
        }),
      },
    };
    const post: HttpPost = async (_url, headers) =>
      answers[(headers["x-amz-target"] ?? "").replace("AmazonSQS.", "")] ?? { status: 500, body: "" };
    const sender = createSqsSender({ timeoutMs: 5_000, allowPrivateNetworks: true, post });
    const destination = {
      kind: "sqs" as const,
      queueUrl: "https://sqs.eu-west-1.amazonaws.com/1/orders",
      region: "eu-west-1",
      accessKeyId: "AKIDEXAMPLE",
      secretAccessKey: "sk-9f8e7d",
      sessionToken: null,
      endpointUrl: null,
      key: "resource" as const,
    };
    const outcome = await sender.send(brokerRequest(destination));
    expect(outcome).toMatchObject({ ok: false, error: "auth_error", responseStatus: null });
    expect(outcome.responseBody).toContain("SignatureDoesNotMatch");
    expect(outcome.responseBody).not.toContain("sk-9f8e7d");

    answers.SendMessage = { status: 200, body: "not json" };
    expect((await sender.send(brokerRequest(destination))).error).toBe("broker_rejected");
    const failing: HttpPost = async () => {
      throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    };
    const down = createSqsSender({ timeoutMs: 5_000, allowPrivateNetworks: true, post: failing });
    expect((await down.send(brokerRequest(destination))).error).toBe("connection_error");
    await Promise.all([sender.close(), down.close()]);
  });
});
