import type { Erasure, Settings } from "../../clients/typescript/client.ts";
import { connectApi, listPages } from "./api.ts";
import { integer } from "./arg-values.ts";
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

function printErasure(io: Io, e: Erasure): void {
  printFields(io, [
    ["id", e.id],
    ["subject", e.subject === "resource_id" ? `resource_id ${e.resource_id}` : "recipient (not kept)"],
    ["events erased", e.events_erased],
    ["deliveries erased", e.deliveries_erased],
    ["of them cancelled", e.deliveries_cancelled],
    ["when", timeWithAge(e.created_at)],
  ]);
}

const create: Command = {
  name: "erasures create",
  usage: "--resource-id UUID | --recipient ADDRESS [--json]",
  summary: "Erase every stored event of the project about one subject, and strip their delivery records.",
  details:
    "Events whose resource_id (or data.recipient, compared case-insensitively) matches are deleted; their delivery records keep their outcome, lose the receiver's answer and are marked erased; those still pending are cancelled and never sent. Safe to repeat.",
  options: [
    ["--resource-id UUID", "The subject resource (a message's or a domain's id)"],
    ["--recipient ADDRESS", "The recipient of message events (an e-mail address, a phone number)"],
    JSON_OPTION,
  ],
  examples: [
    "npx herald erasures create --resource-id 6f1c2b9e-8a44-4c1e-9a53-0d5b2f7e1a10",
    "npx herald erasures create --recipient ada@example.com --json",
  ],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {
      "resource-id": { type: "string" },
      recipient: { type: "string" },
    });
    positionals(this, rest, []);
    const resourceId = values["resource-id"];
    const recipient = values.recipient;
    if ((resourceId === undefined) === (recipient === undefined)) {
      throw usageError(this, "give exactly one of --resource-id and --recipient");
    }
    const api = connectApi(io, deps);
    const { data } = await api.call(
      api.client.POST("/api/v1/erasures", {
        body: resourceId !== undefined ? { resource_id: resourceId } : { recipient: recipient! },
      }),
    );
    return answer(io, values.json, data, () => {
      io.out(
        `Erased ${data.events_erased} ${data.events_erased === 1 ? "event" : "events"} and ${data.deliveries_erased} delivery ${data.deliveries_erased === 1 ? "record" : "records"} (${data.deliveries_cancelled} pending, now cancelled).\n`,
      );
      printErasure(io, data);
    });
  },
};

const get: Command = {
  name: "erasures get",
  usage: "<erasure-id> [--json]",
  summary: "Show one erasure and what it removed.",
  options: [JSON_OPTION],
  examples: ["npx herald erasures get 0b8f7c1e-2a3d-4e5f-8a9b-0c1d2e3f4a5b"],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {});
    const [id] = positionals(this, rest, ["<erasure-id>"]);
    const api = connectApi(io, deps);
    const { data } = await api.call(
      api.client.GET("/api/v1/erasures/{id}", { params: { path: { id: id! } } }),
    );
    return answer(io, values.json, data, () => printErasure(io, data));
  },
};

const list: Command = {
  name: "erasures list",
  usage: "[--limit N] [--cursor C] [--all] [--json]",
  summary: "List the project's erasures, newest first.",
  options: [
    ["--limit N", "Erasures per page, 1-100 (default 50)"],
    ["--cursor C", "Continue from a previous page's next_cursor"],
    ["--all", "Follow next_cursor through every page"],
    JSON_OPTION,
  ],
  examples: ["npx herald erasures list --all"],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {
      limit: { type: "string" },
      cursor: { type: "string" },
      all: { type: "boolean", default: false },
    });
    positionals(this, rest, []);
    const limit = values.limit === undefined ? undefined : integer(this, "--limit", values.limit, 1, 100);
    const api = connectApi(io, deps);
    const result = await listPages(
      async (cursor) =>
        (await api.call(api.client.GET("/api/v1/erasures", { params: { query: { limit, cursor } } }))).data,
      { all: values.all, cursor: values.cursor },
    );
    return answer(io, values.json, result, () => {
      printTable(
        io,
        result.data.map((e) => ({
          id: e.id,
          "when (utc)": readableTime(e.created_at),
          subject: e.subject === "resource_id" ? `resource_id ${e.resource_id}` : "recipient",
          events: String(e.events_erased),
          deliveries: String(e.deliveries_erased),
          cancelled: String(e.deliveries_cancelled),
        })),
        ["id", "when (utc)", "subject", "events", "deliveries", "cancelled"],
      );
      if (result.next_cursor)
        io.out(`\nMore: npx herald erasures list --cursor ${result.next_cursor} (or --all)`);
    });
  },
};

export const erasuresGroup: CommandGroup = {
  name: "erasures",
  summary: "Erase a subject's events (a resource id or a recipient) from the project.",
  commands: [create, get, list],
};

function printSettings(io: Io, s: Settings): void {
  printFields(io, [
    [
      "retention",
      s.retention === null ? `${s.effective_retention} (the server's HERALD_RETENTION)` : s.retention,
    ],
    ["applied", s.effective_retention],
    ["longest allowed", s.max_retention],
    ["changed", timeWithAge(s.updated_at)],
  ]);
}

const settingsGet: Command = {
  name: "settings get",
  usage: "[--json]",
  summary: "Show the project's settings (its retention).",
  options: [JSON_OPTION],
  examples: ["npx herald settings get"],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {});
    positionals(this, rest, []);
    const api = connectApi(io, deps);
    const { data } = await api.call(api.client.GET("/api/v1/settings"));
    return answer(io, values.json, data, () => printSettings(io, data));
  },
};

const settingsSet: Command = {
  name: "settings set",
  usage: "--retention DURATION|default [--json]",
  summary: "Change the project's settings.",
  details:
    "--retention keeps the project's events, delivery records and erasure records for this long (12h, 7d), at most the server's HERALD_RETENTION; `default` follows HERALD_RETENTION again.",
  options: [["--retention DURATION", "How long to keep the project's data, or default"], JSON_OPTION],
  examples: ["npx herald settings set --retention 7d", "npx herald settings set --retention default"],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, { retention: { type: "string" } });
    positionals(this, rest, []);
    if (values.retention === undefined) throw usageError(this, "nothing to change: give --retention");
    const api = connectApi(io, deps);
    const { data } = await api.call(
      api.client.PATCH("/api/v1/settings", {
        body: { retention: values.retention === "default" ? null : values.retention },
      }),
    );
    return answer(io, values.json, data, () => printSettings(io, data));
  },
};

export const settingsGroup: CommandGroup = {
  name: "settings",
  summary: "The project's settings: how long its data is kept.",
  commands: [settingsGet, settingsSet],
};
