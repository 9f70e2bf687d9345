import type { EventType } from "../../clients/typescript/client.ts";
import type { components } from "../../clients/typescript/schema.d.ts";
import { connectApi } from "./api.ts";
import { headerPairs, orderingArg, rateLimitArg, signatureScheme, splitList } from "./arg-values.ts";
import { type Command, JSON_OPTION, parseCommandArgs, positionals, usageError } from "./command.ts";
import { answer } from "./format.ts";
import { DESTINATION_ARGS, DESTINATION_OPTIONS, destinationBody } from "./webhooks-destination.ts";
import {
  CLIENT_CERT_OPTIONS,
  clientCertificateOption,
  FILTER_HELP,
  filterOption,
} from "./webhooks-options.ts";
import { printSecret, printWebhook } from "./webhooks-output.ts";

/** What POST /webhooks takes: one variant per kind (the destination's fields checked by the API). */
type CreateBody = components["schemas"]["CreateWebhookRequest"];

export const create: Command = {
  name: "webhooks create",
  usage:
    "(--url URL | --kind kafka|rabbitmq|sqs ...) --events TYPE[,TYPE...] [--description TEXT] [--header NAME=VALUE]... [--signature-scheme SCHEME] [--filter JSON] [--rate-limit N/s|N/m] [--ordering fifo] [--client-cert FILE --client-key FILE] [--json]",
  summary: "Register an endpoint for the listed event types; prints its signing secret once.",
  details:
    "The URL must be https:// unless the server runs with HERALD_ALLOW_HTTP_URLS=true (local development). Custom header values are stored encrypted and shown as ******** from then on. With --kind kafka, rabbitmq or sqs, events go to a Kafka topic, a RabbitMQ exchange or an SQS queue instead (see docs/destinations.md); their credentials are read from environment variables and shown as ******** too.",
  options: [
    ["--url URL", "Where deliveries are POSTed"],
    ["--events TYPES", "Comma-separated event types (repeatable); see npx herald events types"],
    ["--description TEXT", "A note for people"],
    ["--header NAME=VALUE", "A header sent with every delivery, e.g. an API key (repeatable)"],
    [
      "--signature-scheme SCHEME",
      "herald-v1 (default), standard-webhooks, or standard-webhooks-ed25519 (Ed25519: prints the public key instead of a secret)",
    ],
    ["--filter JSON", FILTER_HELP],
    ["--rate-limit N/s|N/m", "At most N deliveries per second (5/s) or per minute (300/m); more wait"],
    ["--ordering fifo", "Deliver events in the order they were accepted, one at a time (default none)"],
    ...CLIENT_CERT_OPTIONS,
    ...DESTINATION_OPTIONS,
    JSON_OPTION,
  ],
  examples: [
    "npx herald webhooks create --url https://example.com/hooks --events message.delivered,message.bounced",
    'npx herald webhooks create --url https://example.com/hooks --events message.delivered --header "Authorization=Bearer $RECEIVER_KEY" --signature-scheme standard-webhooks',
    `npx herald webhooks create --url https://example.com/hooks --events message.bounced --filter '{"data.message_type":"transactional"}'`,
    "npx herald webhooks create --url https://example.com/hooks --events message.delivered --rate-limit 5/s",
    "npx herald webhooks create --url https://example.com/hooks --events message.delivered --ordering fifo",
    "npx herald webhooks create --url https://alerts.example.com/herald --events endpoint.disabled,endpoint.failing,endpoint.recovered,delivery.exhausted",
    "HERALD_DESTINATION_PASSWORD=... npx herald webhooks create --kind kafka --brokers b1.example.com:9092,b2.example.com:9092 --topic orders --sasl-mechanism scram-sha-512 --sasl-username herald --events message.delivered",
    "HERALD_DESTINATION_PASSWORD=... npx herald webhooks create --kind rabbitmq --amqp-url amqps://herald@mq.example.com/prod --exchange events --routing-key orders --events message.delivered",
    "HERALD_SQS_SECRET_ACCESS_KEY=... npx herald webhooks create --kind sqs --queue-url https://sqs.eu-west-1.amazonaws.com/123456789012/orders --region eu-west-1 --access-key-id AKIA... --events message.delivered",
  ],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {
      url: { type: "string" },
      events: { type: "string", multiple: true },
      description: { type: "string" },
      header: { type: "string", multiple: true },
      "signature-scheme": { type: "string" },
      filter: { type: "string" },
      "rate-limit": { type: "string" },
      ordering: { type: "string" },
      "client-cert": { type: "string" },
      "client-key": { type: "string" },
      ...DESTINATION_ARGS,
    });
    positionals(this, rest, []);
    const events = splitList(values.events);
    const destination = destinationBody(this, io, values);
    if (destination && values.url !== undefined)
      throw usageError(
        this,
        `--url is not an option of --kind ${destination.kind}: its address comes from the destination`,
      );
    if (!destination && (!values.url || !events)) throw usageError(this, "--url and --events are required");
    if (!events) throw usageError(this, "--events is required");
    const headers = headerPairs(this, values.header);
    const scheme = signatureScheme(this, values["signature-scheme"]);
    const filter = values.filter === undefined ? undefined : filterOption(this, values.filter);
    const rateLimit = values["rate-limit"];
    const api = connectApi(io, deps);
    const { data } = await api.call(
      api.client.POST("/api/v1/webhooks", {
        body: {
          ...(destination ?? { url: values.url! }),
          events: events as EventType[],
          description: values.description,
          ...(headers ? { headers } : {}),
          ...(scheme ? { signature_scheme: scheme } : {}),
          filter,
          rate_limit:
            rateLimit === undefined ? undefined : rateLimitArg(this, "--rate-limit", rateLimit, false),
          ordering:
            values.ordering === undefined ? undefined : orderingArg(this, "--ordering", values.ordering),
          client_certificate: clientCertificateOption(this, io, values["client-cert"], values["client-key"]),
        } as CreateBody,
      }),
    );
    return answer(io, values.json, data, () => {
      io.out(`Created endpoint ${data.id}\n`);
      printWebhook(io, data);
      printSecret(io, data.secret, data);
    });
  },
};
