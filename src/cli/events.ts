import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { HeraldEvent, PublishEvent } from "../../clients/typescript/client.ts";
import { EVENT_DESCRIPTIONS, EVENT_TYPES, type EventType, isEventType } from "../domain/event-catalog.ts";
import { sampleEventData } from "../domain/samples.ts";
import { connectApi } from "./api.ts";
import { instant } from "./arg-values.ts";
import {
  type Command,
  type CommandGroup,
  JSON_OPTION,
  parseCommandArgs,
  positionals,
  usageError,
} from "./command.ts";
import { sendEventsFile } from "./events-file.ts";
import { answer, indentedJson, printFields, timeWithAge } from "./format.ts";
import type { Io } from "./io.ts";

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length]!;
}

/** The catalog type a mistyped one most likely meant, if any is close. */
export function closestEventType(text: string): EventType | null {
  let best: EventType | null = null;
  let bestDistance = 4;
  for (const t of EVENT_TYPES) {
    const d = Math.min(editDistance(text, t), editDistance(text, t.slice(t.indexOf(".") + 1)));
    if (d < bestDistance) [best, bestDistance] = [t, d];
  }
  return best;
}

function eventType(command: Command, text: string): EventType {
  if (isEventType(text)) return text;
  const guess = closestEventType(text);
  throw usageError(
    command,
    `unknown event type "${text}"${guess ? ` (did you mean ${guess}?)` : ""}; the types are ${EVENT_TYPES.join(", ")}`,
  );
}

function dataOverrides(command: Command, text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let source = text;
  if (text.startsWith("@")) {
    try {
      source = readFileSync(text.slice(1), "utf8");
    } catch (e) {
      throw usageError(command, `cannot read --data file ${text.slice(1)}: ${(e as Error).message}`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (e) {
    throw usageError(command, `--data is not JSON (${(e as Error).message})`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw usageError(command, '--data must be a JSON object, e.g. \'{"recipient":"bob@example.com"}\'');
  }
  return value as Record<string, unknown>;
}

/**
 * The sample's subject id and clock. With an idempotency key both are derived from the key (the clock
 * from the day), so repeating the same command sends the same body and is answered as a replay.
 */
export function sampleBasis(
  idempotencyKey: string | undefined,
  now = new Date(),
): { subjectId: string; now: Date } {
  if (idempotencyKey === undefined) return { subjectId: crypto.randomUUID(), now };
  const h = createHash("sha256").update(`herald-cli-sample:${idempotencyKey}`).digest("hex");
  const variant = ((Number.parseInt(h[16]!, 16) & 3) | 8).toString(16);
  return {
    subjectId: `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`,
    now: new Date(Math.floor(now.getTime() / 86_400_000) * 86_400_000),
  };
}

function printEvent(io: Io, e: HeraldEvent, extra: [string, unknown][] = []): void {
  printFields(io, [
    ["id", e.id],
    ["type", e.type],
    ["resource", e.resource_id],
    ["occurred", timeWithAge(e.occurred_at)],
    ["tenant", e.tenant_id],
    ["project", e.project_id],
    ...extra,
  ]);
  io.out("data:");
  io.out(indentedJson(e.data));
}

const sendEvent: Command = {
  name: "events send",
  usage:
    "<type> [--data JSON] [--resource-id UUID] [--occurred-at TIME] [--idempotency-key KEY] [--json] | --file FILE.jsonl [--json]",
  summary:
    "Publish an event with realistic sample data, or every event of a file, to every subscribed endpoint.",
  details:
    'The sample data fits the type (a message or a domain with a random id); --data overrides its fields (a shallow merge). --resource-id also becomes data.message_id or data.domain_id unless --data sets it. With --idempotency-key the sample\'s id is derived from the key, so repeating the command is answered as a replay. With --file, each line of the file is one event as POST /api/v1/events takes it, plus an optional idempotency_key ({"type": "message.sent", "data": {...}, "idempotency_key": "..."}); they are sent in batches of up to 100 (POST /api/v1/events/batch), each failed line is printed with its number, then one summary line; the exit code is 1 when any line failed.',
  options: [
    ["--data JSON", "Fields to set in data, as a JSON object, or @file.json"],
    ["--resource-id UUID", "The message or domain id"],
    ["--occurred-at TIME", "When it happened (ISO 8601; default now)"],
    ["--idempotency-key KEY", "A repeat within 24 h returns the first answer without a second fan-out"],
    ["--file FILE.jsonl", "Publish every event of a JSON Lines file (one event object per line) instead"],
    JSON_OPTION,
  ],
  examples: [
    "npx herald events send message.delivered",
    `npx herald events send message.bounced --data '{"recipient":"bob@example.com","channel":"email"}'`,
    "npx herald events send --file events.jsonl",
  ],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {
      data: { type: "string" },
      "resource-id": { type: "string" },
      "occurred-at": { type: "string" },
      "idempotency-key": { type: "string" },
      file: { type: "string" },
    });
    if (values.file !== undefined) {
      positionals(this, rest, []);
      const single = (["data", "resource-id", "occurred-at", "idempotency-key"] as const).find(
        (o) => values[o] !== undefined,
      );
      if (single)
        throw usageError(this, `--${single} is for one event; with --file, put it in the file's lines`);
      return sendEventsFile(this, values.file, values.json, io, deps);
    }
    const [typeText] = positionals(this, rest, ["<type>"]);
    const type = eventType(this, typeText!);
    const overrides = dataOverrides(this, values.data);
    const resourceId = values["resource-id"];
    const key = values["idempotency-key"];
    const basis = sampleBasis(key);
    const sample = sampleEventData(type, { subjectId: resourceId ?? basis.subjectId }, basis.now);
    const data = { ...sample, ...overrides };
    const api = connectApi(io, deps);
    const { data: published, response } = await api.call(
      api.client.POST("/api/v1/events", {
        // The API checks data against the type (422 with the path of what is wrong).
        body: {
          type,
          data,
          resource_id: resourceId,
          occurred_at:
            values["occurred-at"] === undefined
              ? undefined
              : instant(this, "--occurred-at", values["occurred-at"]),
        } as PublishEvent,
        params: { header: key === undefined ? {} : { "idempotency-key": key } },
      }),
    );
    return answer(io, values.json, published, () => {
      const { endpoints, ...envelope } = published;
      const replayed = response.headers.get("idempotent-replayed") === "true";
      io.out(
        replayed
          ? `Already published with this idempotency key: ${envelope.id} (no second fan-out).\n`
          : `Published ${envelope.type} ${envelope.id} to ${endpoints} ${endpoints === 1 ? "endpoint" : "endpoints"}.\n`,
      );
      printEvent(io, envelope, [["endpoints", endpoints]]);
    });
  },
};

const getEvent: Command = {
  name: "events get",
  usage: "<event-id> [--json]",
  summary: "Show an event's envelope, exactly as it is posted to endpoints.",
  options: [JSON_OPTION],
  examples: ["npx herald events get evt_4f9a0c2e8b7d4e1f9a3c5b7d9e1f3a5c"],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {});
    const [id] = positionals(this, rest, ["<event-id>"]);
    const api = connectApi(io, deps);
    const { data } = await api.call(api.client.GET("/api/v1/events/{id}", { params: { path: { id: id! } } }));
    return answer(io, values.json, data, () => {
      printEvent(io, data);
    });
  },
};

const types: Command = {
  name: "events types",
  usage: "[--json]",
  summary: "List the event types of the catalog (no server needed).",
  options: [["--json", "Print a JSON array of the type names"]],
  examples: ["npx herald events types"],
  api: false,
  async run(args, io) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {});
    positionals(this, rest, []);
    return answer(io, values.json, EVENT_TYPES, () => {
      const width = Math.max(...EVENT_TYPES.map((t) => t.length));
      for (const t of EVENT_TYPES) io.out(`${t.padEnd(width)}  ${EVENT_DESCRIPTIONS[t]}`);
    });
  },
};

export const eventsGroup: CommandGroup = {
  name: "events",
  summary: "Publish events (the platform side) and look them up.",
  commands: [sendEvent, getEvent, types],
};
