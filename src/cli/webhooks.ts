import type { EventType, Webhook } from "../../clients/typescript/client.ts";
import { connectApi, listPages } from "./api.ts";
import { instant, integer, seconds } from "./arg-values.ts";
import {
  type Command,
  type CommandGroup,
  JSON_OPTION,
  parseCommandArgs,
  positionals,
  usageError,
} from "./command.ts";
import { answer, readableTime } from "./format.ts";
import { printTable } from "./io.ts";
import { create } from "./webhooks-create.ts";
import { ID } from "./webhooks-options.ts";
import { endpointState, printSecret, printWebhook } from "./webhooks-output.ts";
import { filterTest, test } from "./webhooks-test.ts";
import { update } from "./webhooks-update.ts";

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
