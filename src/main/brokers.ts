// The broker senders of a Herald process (ADR 27): Kafka, RabbitMQ and SQS, the same on Node, Bun and
// Deno (pure-JS clients and SQS's JSON protocol over fetch), so they are made here once, not per runtime.

import { proxyRoute } from "../adapters/delivery/proxy-tunnel.ts";
import type { Config } from "../app/config.ts";
import type { BrokerKind } from "../app/destinations.ts";
import type { Logger } from "../app/logger.ts";
import type { BrokerDeliveryRequest, BrokerSender } from "../app/ports/sending.ts";
import type { HmacSha256 } from "../domain/hmac.ts";
import type { Ed25519Sign } from "../domain/standard-webhooks-ed25519.ts";

/**
 * One sender per kind this build can deliver to. A kind left out has none: a send to it fails as
 * `connection_error` with a log line naming the kind (src/app/destinations.ts), never a crash. Each is
 * given the attempt timeout and the address policy as the HTTPS sender is, and is loaded at its kind's
 * first delivery: a process without broker endpoints never reads a broker client's code.
 */
export function makeBrokerSenders(config: Config, logger: Logger): Partial<Record<BrokerKind, BrokerSender>> {
  const common = { timeoutMs: config.deliveryTimeoutMs, allowPrivateNetworks: config.allowPrivateNetworks };
  return {
    kafka: lazySender(async () =>
      (await import("../adapters/destinations/kafka.ts")).createKafkaSender({
        ...common,
        ...(await signers()),
        logger,
      }),
    ),
    rabbitmq: lazySender(async () =>
      (await import("../adapters/destinations/rabbitmq.ts")).createRabbitmqSender({
        ...common,
        ...(await signers()),
      }),
    ),
    // SQS is HTTPS: HERALD_DELIVERY_PROXY applies to it as to an HTTPS endpoint (ADR 27).
    sqs: lazySender(async () =>
      (await import("../adapters/destinations/sqs.ts")).createSqsSender({
        ...common,
        ...(await signers()),
        proxy: proxyRoute(config),
      }),
    ),
  };
}

/**
 * The signers the broker senders use, chosen as the HTTPS sender's are: on Node node:crypto's, which
 * answer at once (Web Crypto's asynchronous HMAC job was a tenth of a Kafka delivery's CPU time); on
 * Bun and Deno none given, so the senders keep the domain's Web Crypto ones, as their fetch sender does.
 */
export async function signers(): Promise<{ hmac?: HmacSha256; ed25519?: Ed25519Sign }> {
  const g = globalThis as { Bun?: unknown; Deno?: unknown };
  if (g.Bun !== undefined || g.Deno !== undefined) return {};
  const [{ nodeHmac }, { nodeEd25519 }] = await Promise.all([
    import("../adapters/delivery/node-hmac.ts"),
    import("../adapters/delivery/node-ed25519.ts"),
  ]);
  return { hmac: nodeHmac, ed25519: nodeEd25519 };
}

/** A sender made by `load` at its first send; release and close before that have nothing to do. */
export function lazySender(load: () => Promise<BrokerSender>): BrokerSender {
  let made: Promise<BrokerSender> | null = null;
  const sender = () => {
    made ??= load().catch((e: unknown) => {
      made = null;
      throw e;
    });
    return made;
  };
  return {
    send: async (request: BrokerDeliveryRequest) => (await sender()).send(request),
    release: async (endpointId: string) => {
      if (made) await (await made).release(endpointId);
    },
    close: async () => {
      if (made) await (await made.catch(() => null))?.close();
    },
  };
}
