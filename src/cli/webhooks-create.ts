import type { EventType } from "../../clients/typescript/client.ts";
import { connectApi } from "./api.ts";
import { headerPairs, orderingArg, rateLimitArg, signatureScheme, splitList } from "./arg-values.ts";
import { type Command, JSON_OPTION, parseCommandArgs, positionals, usageError } from "./command.ts";
import { answer } from "./format.ts";
import {
  CLIENT_CERT_OPTIONS,
  clientCertificateOption,
  FILTER_HELP,
  filterOption,
} from "./webhooks-options.ts";
import { printSecret, printWebhook } from "./webhooks-output.ts";

export const create: Command = {
  name: "webhooks create",
  usage:
    "--url URL --events TYPE[,TYPE...] [--description TEXT] [--header NAME=VALUE]... [--signature-scheme SCHEME] [--filter JSON] [--rate-limit N/s|N/m] [--ordering fifo] [--client-cert FILE --client-key FILE] [--json]",
  summary: "Register an endpoint for the listed event types; prints its signing secret once.",
  details:
    "The URL must be https:// unless the server runs with HERALD_ALLOW_HTTP_URLS=true (local development). Custom header values are stored encrypted and shown as ******** from then on.",
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
    JSON_OPTION,
  ],
  examples: [
    "npx herald webhooks create --url https://example.com/hooks --events message.delivered,message.bounced",
    'npx herald webhooks create --url https://example.com/hooks --events message.delivered --header "Authorization=Bearer $RECEIVER_KEY" --signature-scheme standard-webhooks',
    `npx herald webhooks create --url https://example.com/hooks --events message.bounced --filter '{"data.message_type":"transactional"}'`,
    "npx herald webhooks create --url https://example.com/hooks --events message.delivered --rate-limit 5/s",
    "npx herald webhooks create --url https://example.com/hooks --events message.delivered --ordering fifo",
    "npx herald webhooks create --url https://alerts.example.com/herald --events endpoint.disabled,endpoint.failing,endpoint.recovered,delivery.exhausted",
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
    });
    positionals(this, rest, []);
    const events = splitList(values.events);
    if (!values.url || !events) throw usageError(this, "--url and --events are required");
    const headers = headerPairs(this, values.header);
    const scheme = signatureScheme(this, values["signature-scheme"]);
    const filter = values.filter === undefined ? undefined : filterOption(this, values.filter);
    const rateLimit = values["rate-limit"];
    const api = connectApi(io, deps);
    const { data } = await api.call(
      api.client.POST("/api/v1/webhooks", {
        body: {
          url: values.url,
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
        },
      }),
    );
    return answer(io, values.json, data, () => {
      io.out(`Created endpoint ${data.id}\n`);
      printWebhook(io, data);
      printSecret(io, data.secret, data);
    });
  },
};
