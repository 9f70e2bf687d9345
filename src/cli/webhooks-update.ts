import type { EventType } from "../../clients/typescript/client.ts";
import type { components } from "../../clients/typescript/schema.d.ts";
import { connectApi } from "./api.ts";
import { headerPairs, orderingArg, rateLimitArg, signatureScheme, splitList } from "./arg-values.ts";
import { type Command, JSON_OPTION, parseCommandArgs, positionals, usageError } from "./command.ts";
import { answer } from "./format.ts";
import {
  DESTINATION_UPDATE_ARGS,
  DESTINATION_UPDATE_OPTIONS,
  destinationPatchBody,
} from "./webhooks-destination-update.ts";
import { CLIENT_CERT_OPTIONS, clientCertificateOption, filterOption, ID } from "./webhooks-options.ts";
import { printSecret, printWebhook } from "./webhooks-output.ts";

/** What PATCH /webhooks/{id} takes (a destination's patch is checked by the API). */
type UpdateBody = components["schemas"]["UpdateWebhookRequest"];

export const update: Command = {
  name: "webhooks update",
  usage: `${ID} [--url URL] [--events TYPES] [--description TEXT] [--header NAME=VALUE]... [--remove-header NAME]... [--signature-scheme SCHEME] [--filter JSON] [--rate-limit N/s|N/m|none] [--ordering fifo|none] [--client-cert FILE --client-key FILE | --remove-client-cert] [--enable | --disable] [destination options] [--json]`,
  summary:
    "Change an endpoint's URL, event types, description, custom headers, signature scheme, filter, rate limit, ordering, client certificate or state.",
  options: [
    ["--url URL", "A new URL"],
    ["--events TYPES", "Replace the event types (comma-separated, repeatable)"],
    ["--description TEXT", 'A new description ("" clears it)'],
    ["--header NAME=VALUE", "Set a custom header, replacing one of that name; others stay (repeatable)"],
    ["--remove-header NAME", "Stop sending a custom header (repeatable)"],
    [
      "--signature-scheme SCHEME",
      "herald-v1, standard-webhooks or standard-webhooks-ed25519 (between HMAC and Ed25519: issues a new key, printed)",
    ],
    ["--filter JSON", "Replace the payload filter (a JSON object); --filter null removes it"],
    ["--rate-limit N/s|N/m|none", "A new rate limit (5/s, 300/m), or none to remove it"],
    ["--ordering fifo|none", "fifo: one at a time, in acceptance order; none: no order"],
    ...CLIENT_CERT_OPTIONS.map(([o, h]): [string, string] => [o, `${h} (replaces the current one)`]),
    ["--remove-client-cert", "Stop presenting a client certificate; its key is deleted"],
    ["--enable", "Enable the endpoint"],
    ["--disable", "Disable it (disabled_reason: manual); its new events are recorded as skipped"],
    ...DESTINATION_UPDATE_OPTIONS,
    JSON_OPTION,
  ],
  examples: [
    "npx herald webhooks update 3f1c9e2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b --events message.delivered --disable",
    `npx herald webhooks update 3f1c9e2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b --filter '{"data.channel":{"$in":["email","sms"]}}'`,
    "npx herald webhooks update 3f1c9e2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b --rate-limit 300/m",
    "npx herald webhooks update 3f1c9e2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b --topic orders.v2 --brokers b3.example.com:9092",
  ],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {
      url: { type: "string" },
      events: { type: "string", multiple: true },
      description: { type: "string" },
      filter: { type: "string" },
      "rate-limit": { type: "string" },
      ordering: { type: "string" },
      enable: { type: "boolean", default: false },
      disable: { type: "boolean", default: false },
      header: { type: "string", multiple: true },
      "remove-header": { type: "string", multiple: true },
      "signature-scheme": { type: "string" },
      "client-cert": { type: "string" },
      "client-key": { type: "string" },
      "remove-client-cert": { type: "boolean", default: false },
      ...DESTINATION_UPDATE_ARGS,
    });
    const [id] = positionals(this, rest, [ID]);
    const certificate = clientCertificateOption(this, io, values["client-cert"], values["client-key"]);
    if (certificate && values["remove-client-cert"])
      throw usageError(this, "--client-cert and --remove-client-cert exclude each other");
    if (values.enable && values.disable) throw usageError(this, "--enable and --disable exclude each other");
    const set = headerPairs(this, values.header);
    const removed = values["remove-header"] ?? [];
    for (const name of removed) {
      if (set && Object.keys(set).some((n) => n.toLowerCase() === name.toLowerCase())) {
        throw usageError(this, `--header and --remove-header both name ${name}`);
      }
    }
    const headers: Record<string, string | null> | undefined =
      set || removed.length > 0
        ? { ...Object.fromEntries(removed.map((name) => [name, null])), ...set }
        : undefined;
    const body = {
      url: values.url,
      events: splitList(values.events) as EventType[] | undefined,
      description: values.description === undefined ? undefined : values.description || null,
      enabled: values.enable ? true : values.disable ? false : undefined,
      headers,
      signature_scheme: signatureScheme(this, values["signature-scheme"]),
      filter: values.filter === undefined ? undefined : filterOption(this, values.filter),
      rate_limit:
        values["rate-limit"] === undefined
          ? undefined
          : rateLimitArg(this, "--rate-limit", values["rate-limit"], true),
      ordering: values.ordering === undefined ? undefined : orderingArg(this, "--ordering", values.ordering),
      client_certificate: values["remove-client-cert"] ? null : certificate,
      ...destinationPatchBody(this, io, values),
    };
    if (Object.values(body).every((v) => v === undefined)) {
      throw usageError(
        this,
        "nothing to change: give --url, --events, --description, --header, --remove-header, --signature-scheme, --filter, --rate-limit, --ordering, --client-cert, --remove-client-cert, --enable, --disable or a destination's options",
      );
    }
    const api = connectApi(io, deps);
    const { data } = await api.call(
      api.client.PATCH("/api/v1/webhooks/{id}", { params: { path: { id: id! } }, body: body as UpdateBody }),
    );
    return answer(io, values.json, data, () => {
      io.out(`Updated endpoint ${data.id}\n`);
      printWebhook(io, data);
      // A switch between an HMAC scheme and standard-webhooks-ed25519 issued a key.
      if (data.secret !== undefined) printSecret(io, data.secret, data);
    });
  },
};
