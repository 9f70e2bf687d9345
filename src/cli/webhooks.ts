import { readFileSync } from "node:fs";
import type { EventFilter, EventType, PublishEvent, Webhook } from "../../clients/typescript/client.ts";
import { connectApi, listPages } from "./api.ts";
import {
  headerPairs,
  instant,
  integer,
  orderingArg,
  rateLimitArg,
  seconds,
  signatureScheme,
  splitList,
} from "./arg-values.ts";
import {
  type Command,
  type CommandGroup,
  JSON_OPTION,
  parseCommandArgs,
  positionals,
  usageError,
} from "./command.ts";
import { answer, printFields, readableTime, timeWithAge } from "./format.ts";
import { type Io, printTable } from "./io.ts";

const ID = "<webhook-id>";

/** `5/s`, `300/m`, or `none`. */
export function rateLimitLabel(limit: Webhook["rate_limit"]): string {
  if (!limit) return "none";
  return limit.per_second !== undefined ? `${limit.per_second}/s` : `${limit.per_minute}/m`;
}

/** `enabled`, or `disabled (failing)`. */
export function endpointState(w: Pick<Webhook, "enabled" | "disabled_reason">): string {
  return w.enabled ? "enabled" : `disabled (${w.disabled_reason ?? "manual"})`;
}

function printWebhook(io: Io, w: Webhook): void {
  printFields(io, [
    ["id", w.id],
    ["url", w.url],
    ["events", w.events],
    ["state", endpointState(w)],
    ["rate limit", rateLimitLabel(w.rate_limit)],
    ["ordering", w.ordering === "fifo" ? `fifo (${w.held} held)` : "none"],
    ["description", w.description],
    ["signature scheme", w.signature_scheme],
    ...(w.public_key === null ? [] : [["public key", w.public_key] as [string, unknown]]),
    [
      "headers",
      Object.keys(w.headers).length ? Object.entries(w.headers).map(([n, mask]) => `${n}: ${mask}`) : null,
    ],
    ["filter", w.filter === null ? "none (every event)" : JSON.stringify(w.filter)],
    ["client certificate", clientCertificateLines(w.client_certificate)],
    ["created", timeWithAge(w.created_at)],
    ["updated", timeWithAge(w.updated_at)],
  ]);
}

/** A JSON option's value: parsed, or a usage error naming the option. */
function jsonOption(command: Command, flag: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw usageError(command, `${flag} must be JSON (${(e as Error).message})`);
  }
}

/** --filter: a JSON object, or null (remove it); the API checks the rest and answers 422 with the path. */
function filterOption(command: Command, text: string): EventFilter {
  const value = jsonOption(command, "--filter", text);
  if (value !== null && (typeof value !== "object" || Array.isArray(value))) {
    throw usageError(command, `--filter must be a JSON object such as '{"data.channel":"email"}', or null`);
  }
  return value as EventFilter;
}

/** A client certificate's facts for people: subject, issuer, validity, fingerprint; never the key. */
function clientCertificateLines(c: Webhook["client_certificate"]): string {
  if (c === null) return "none";
  const expired = Date.parse(c.not_after) <= Date.now() ? " (EXPIRED)" : "";
  return `${c.subject}; issued by ${c.issuer}; valid until ${c.not_after}${expired}; sha256 ${c.fingerprint_sha256}`;
}

/** The environment variable an encrypted --client-key's passphrase is read from (never an argument). */
const PASSPHRASE_ENV = "HERALD_CLIENT_KEY_PASSPHRASE";

/**
 * --client-cert FILE and --client-key FILE: the PEM texts for the API (which checks them and answers
 * 422 naming the field), with the passphrase of an encrypted key from HERALD_CLIENT_KEY_PASSPHRASE.
 */
function clientCertificateOption(
  command: Command,
  io: Io,
  certFile: string | undefined,
  keyFile: string | undefined,
): { certificate: string; private_key: string; passphrase?: string } | undefined {
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined)
    throw usageError(
      command,
      "--client-cert and --client-key go together (the certificate and its private key)",
    );
  const read = (flag: string, file: string) => {
    try {
      return readFileSync(file, "utf8");
    } catch (e) {
      throw usageError(
        command,
        `${flag}: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? "error"})`,
      );
    }
  };
  const passphrase = io.env[PASSPHRASE_ENV];
  return {
    certificate: read("--client-cert", certFile),
    private_key: read("--client-key", keyFile),
    ...(passphrase ? { passphrase } : {}),
  };
}

const CLIENT_CERT_OPTIONS: [string, string][] = [
  [
    "--client-cert FILE",
    "PEM client certificate (then intermediates) presented when the receiver asks for one (mutual TLS)",
  ],
  [
    "--client-key FILE",
    `Its PEM private key, stored encrypted and never shown again; an encrypted key's passphrase is read from ${PASSPHRASE_ENV}`,
  ],
];

const FILTER_HELP =
  'Deliver only events matching this MongoDB-style query over the envelope, e.g. \'{"data.channel":"email"}\' (see docs/adr/0014-payload-filters.md)';

/** What a creation, rotation or change of key kind issued: a secret (shown once) or, for Ed25519, the public key. */
function printSecret(io: Io, secret: string, w: Pick<Webhook, "public_key">): void {
  if (w.public_key !== null) {
    io.out(
      `\nPublic key (receivers verify v1a signatures with it; webhooks get shows it again):\n  ${secret}\n`,
    );
    return;
  }
  io.out(`\nSigning secret:\n  ${secret}\n`);
  io.out(
    "⚠ This secret will not be shown again. Store it now (e.g. HERALD_WEBHOOK_SECRET for npx herald listen).",
  );
}

const create: Command = {
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

const list: Command = {
  name: "webhooks list",
  usage: "[--enabled | --disabled] [--event TYPE] [--limit N] [--cursor C] [--all] [--json]",
  summary: "List endpoints, newest first.",
  options: [
    ["--enabled", "Only enabled endpoints"],
    ["--disabled", "Only disabled endpoints"],
    ["--event TYPE", "Only endpoints subscribed to this event type"],
    ["--limit N", "Endpoints per page, 1-100 (default 50)"],
    ["--cursor C", "Continue from a previous page's next_cursor"],
    ["--all", "Follow next_cursor through every page"],
    JSON_OPTION,
  ],
  examples: [
    "npx herald webhooks list --disabled",
    "npx herald webhooks list --all --json | jq -r '.data[].url'",
  ],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {
      enabled: { type: "boolean", default: false },
      disabled: { type: "boolean", default: false },
      event: { type: "string" },
      limit: { type: "string" },
      cursor: { type: "string" },
      all: { type: "boolean", default: false },
    });
    positionals(this, rest, []);
    if (values.enabled && values.disabled)
      throw usageError(this, "--enabled and --disabled exclude each other");
    const limit = values.limit === undefined ? undefined : integer(this, "--limit", values.limit, 1, 100);
    const query = {
      enabled: values.enabled ? ("true" as const) : values.disabled ? ("false" as const) : undefined,
      event: values.event as EventType | undefined,
      limit,
    };
    const api = connectApi(io, deps);
    const page = async (cursor: string | undefined) =>
      (await api.call(api.client.GET("/api/v1/webhooks", { params: { query: { ...query, cursor } } }))).data;
    const result = await listPages(page, { all: values.all, cursor: values.cursor });
    return answer(io, values.json, result, () => {
      printTable(
        io,
        result.data.map((w) => ({
          id: w.id,
          url: w.url,
          events: w.events.join(","),
          state: endpointState(w),
          "created (utc)": readableTime(w.created_at),
        })),
        ["id", "url", "events", "state", "created (utc)"],
      );
      if (result.next_cursor)
        io.out(`\nMore: npx herald webhooks list --cursor ${result.next_cursor} (or --all)`);
    });
  },
};

/** `herald webhooks <verb> <id>` commands that print one endpoint. */
function showOne(
  verb: string,
  summary: string,
  request: (api: ReturnType<typeof connectApi>, id: string) => Promise<{ data: Webhook }>,
  intro: (w: Webhook) => string | null,
): Command {
  return {
    name: `webhooks ${verb}`,
    usage: `${ID} [--json]`,
    summary,
    options: [JSON_OPTION],
    examples: [`npx herald webhooks ${verb} 3f1c9e2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b`],
    api: true,
    async run(args, io, deps) {
      const { values, positionals: rest } = parseCommandArgs(this, args, {});
      const [id] = positionals(this, rest, [ID]);
      const api = connectApi(io, deps);
      const { data } = await request(api, id!);
      return answer(io, values.json, data, () => {
        const line = intro(data);
        if (line) io.out(`${line}\n`);
        printWebhook(io, data);
      });
    },
  };
}

const get = showOne(
  "get",
  "Show one endpoint (never its secret).",
  (api, id) => api.call(api.client.GET("/api/v1/webhooks/{id}", { params: { path: { id } } })),
  () => null,
);

const enable = showOne(
  "enable",
  "Enable an endpoint and clear its failure streak (idempotent).",
  (api, id) => api.call(api.client.POST("/api/v1/webhooks/{id}/enable", { params: { path: { id } } })),
  (w) =>
    `Enabled endpoint ${w.id}. Skipped deliveries can now be sent: npx herald webhooks recover ${w.id} --since 1d`,
);

const update: Command = {
  name: "webhooks update",
  usage: `${ID} [--url URL] [--events TYPES] [--description TEXT] [--header NAME=VALUE]... [--remove-header NAME]... [--signature-scheme SCHEME] [--filter JSON] [--rate-limit N/s|N/m|none] [--ordering fifo|none] [--client-cert FILE --client-key FILE | --remove-client-cert] [--enable | --disable] [--json]`,
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
    JSON_OPTION,
  ],
  examples: [
    "npx herald webhooks update 3f1c9e2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b --events message.delivered --disable",
    `npx herald webhooks update 3f1c9e2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b --filter '{"data.channel":{"$in":["email","sms"]}}'`,
    "npx herald webhooks update 3f1c9e2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b --rate-limit 300/m",
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
    };
    if (Object.values(body).every((v) => v === undefined)) {
      throw usageError(
        this,
        "nothing to change: give --url, --events, --description, --header, --remove-header, --signature-scheme, --filter, --rate-limit, --ordering, --client-cert, --remove-client-cert, --enable or --disable",
      );
    }
    const api = connectApi(io, deps);
    const { data } = await api.call(
      api.client.PATCH("/api/v1/webhooks/{id}", { params: { path: { id: id! } }, body }),
    );
    return answer(io, values.json, data, () => {
      io.out(`Updated endpoint ${data.id}\n`);
      printWebhook(io, data);
      // A switch between an HMAC scheme and standard-webhooks-ed25519 issued a key.
      if (data.secret !== undefined) printSecret(io, data.secret, data);
    });
  },
};

const rotate: Command = {
  name: "webhooks rotate",
  usage: `${ID} [--grace DURATION] [--json]`,
  summary: "Issue a new signing secret; prints it once.",
  details:
    "During the grace period every delivery carries two signatures (new, then old), so receivers can switch without dropping deliveries.",
  options: [
    ["--grace DURATION", "How long the old secret keeps signing too: 3600, 90s, 2h, 7d (max 7d; default 0)"],
    JSON_OPTION,
  ],
  examples: ["npx herald webhooks rotate 3f1c9e2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b --grace 1h"],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, { grace: { type: "string" } });
    const [id] = positionals(this, rest, [ID]);
    const grace = values.grace === undefined ? undefined : seconds(this, "--grace", values.grace);
    const api = connectApi(io, deps);
    const { data } = await api.call(
      api.client.POST("/api/v1/webhooks/{id}/rotate", {
        params: { path: { id: id! } },
        body: grace === undefined ? {} : { grace_period_seconds: grace },
      }),
    );
    return answer(io, values.json, data, () => {
      io.out(`Rotated the secret of endpoint ${data.id}.`);
      io.out(
        grace
          ? `The previous secret keeps signing too until ${readableTime(new Date(Date.now() + grace * 1000).toISOString())} UTC.`
          : "The previous secret no longer signs.",
      );
      printSecret(io, data.secret, data);
    });
  },
};

const remove: Command = {
  name: "webhooks delete",
  usage: `${ID} [--json]`,
  summary: "Remove an endpoint; its pending deliveries are cancelled. Asks nothing.",
  options: [["--json", 'Print {"id": ..., "deleted": true} (the API answers 204 without a body)']],
  examples: ["npx herald webhooks delete 3f1c9e2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b"],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {});
    const [id] = positionals(this, rest, [ID]);
    const api = connectApi(io, deps);
    await api.call(api.client.DELETE("/api/v1/webhooks/{id}", { params: { path: { id: id! } } }));
    return answer(io, values.json, { id, deleted: true }, () => {
      io.out(`Deleted endpoint ${id}; its pending deliveries were cancelled.`);
    });
  },
};

const test: Command = {
  name: "webhooks test",
  usage: `${ID} [--type TYPE] [--json]`,
  summary: "Send a sample event of one of the endpoint's types to that endpoint only.",
  details: "It is signed, delivered, retried and recorded like any other event.",
  options: [["--type TYPE", "One of the endpoint's event types (default: the first it lists)"], JSON_OPTION],
  examples: ["npx herald webhooks test 3f1c9e2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b --type message.bounced"],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, { type: { type: "string" } });
    const [id] = positionals(this, rest, [ID]);
    const api = connectApi(io, deps);
    const { data } = await api.call(
      api.client.POST("/api/v1/webhooks/{id}/test", {
        params: { path: { id: id! } },
        body: values.type === undefined ? {} : { type: values.type as EventType },
      }),
    );
    return answer(io, values.json, data, () => {
      io.out(`Sent a test ${data.event.type} event to endpoint ${id}.\n`);
      printFields(io, [
        ["event", data.event.id],
        ["type", data.event.type],
        ["resource", data.event.resource_id],
        ["delivery", data.delivery.id],
        ["status", data.delivery.status],
        ["url", data.delivery.url],
      ]);
      io.out(`\nFollow it: npx herald deliveries get ${data.delivery.id}`);
    });
  },
};

const filterTest: Command = {
  name: "webhooks filter-test",
  usage: `${ID} --event JSON [--filter JSON] [--json]`,
  summary: "Say whether the endpoint would get an event, and which filter clauses failed if not.",
  details:
    "The event is what POST /events takes ({type, data, resource_id?, occurred_at?}) and is validated the same way; nothing is stored or sent. --filter tries a candidate filter instead of the endpoint's own (null: none) without saving it.",
  options: [
    ["--event JSON", "The event to try (required)"],
    ["--filter JSON", "A candidate filter to try instead of the endpoint's own"],
    JSON_OPTION,
  ],
  examples: [
    `npx herald webhooks filter-test 3f1c9e2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b --event '{"type":"message.bounced","data":{"message_id":"6f1c2b9e-8a44-4c1e-9a53-0d5b2f7e1a10","status":"bounced","channel":"email","message_type":"marketing","recipient":"ada@example.com"}}'`,
  ],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {
      event: { type: "string" },
      filter: { type: "string" },
    });
    const [id] = positionals(this, rest, [ID]);
    if (values.event === undefined) throw usageError(this, "--event is required");
    const event = jsonOption(this, "--event", values.event);
    if (typeof event !== "object" || event === null || Array.isArray(event)) {
      throw usageError(
        this,
        '--event must be a JSON object such as \'{"type":"message.delivered","data":{...}}\'',
      );
    }
    const filter = values.filter === undefined ? undefined : filterOption(this, values.filter);
    const api = connectApi(io, deps);
    const { data } = await api.call(
      api.client.POST("/api/v1/webhooks/{id}/filter-test", {
        params: { path: { id: id! } },
        // The API validates the event and answers 422 with the path of what is wrong.
        body: { event: event as PublishEvent, filter },
      }),
    );
    return answer(io, values.json, data, () => {
      io.out(
        data.matches
          ? `Matches: endpoint ${id} would get this event.`
          : `Does not match: endpoint ${id} would not get this event.`,
      );
      io.out(`filter  ${data.filter === null ? "none (every event)" : JSON.stringify(data.filter)}`);
      for (const r of data.reasons) io.out(`  ✘ ${r.path}: ${r.message}`);
    });
  },
};

const recover: Command = {
  name: "webhooks recover",
  usage: `${ID} --since TIME [--until TIME] [--json]`,
  summary: "After an outage, re-send the events whose latest delivery failed or was skipped.",
  details:
    "Queues one manual delivery per such event. The window is at most 14 days; TIME is ISO 8601 (2026-11-21T10:00:00Z), a date, or a duration ago (30m, 2h, 3d).",
  options: [
    ["--since TIME", "Start of the window (required)"],
    ["--until TIME", "End of the window (default: now)"],
    JSON_OPTION,
  ],
  examples: [
    "npx herald webhooks recover 3f1c9e2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b --since 6h",
    "npx herald webhooks recover 3f1c9e2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b --since 2026-11-20T08:00:00Z --until 2026-11-20T12:00:00Z",
  ],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {
      since: { type: "string" },
      until: { type: "string" },
    });
    const [id] = positionals(this, rest, [ID]);
    if (!values.since) throw usageError(this, "--since is required");
    const body = {
      since: instant(this, "--since", values.since),
      until: values.until === undefined ? undefined : instant(this, "--until", values.until),
    };
    const api = connectApi(io, deps);
    const { data } = await api.call(
      api.client.POST("/api/v1/webhooks/{id}/recover", { params: { path: { id: id! } }, body }),
    );
    return answer(io, values.json, data, () => {
      const n = data.queued;
      io.out(
        `Queued ${n} ${n === 1 ? "delivery" : "deliveries"} for endpoint ${id} (events from ${readableTime(data.since)} to ${readableTime(data.until)} UTC).`,
      );
      if (n > 0) io.out(`Watch them: npx herald deliveries list ${id} --since ${data.since}`);
    });
  },
};

export const webhooksGroup: CommandGroup = {
  name: "webhooks",
  summary: "Manage webhook endpoints: register, inspect, change, filter, rotate secrets, test and recover.",
  commands: [create, list, get, update, rotate, enable, remove, test, filterTest, recover],
};
