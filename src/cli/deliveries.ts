import type { Delivery, EventType } from "../../clients/typescript/client.ts";
import { connectApi, listPages } from "./api.ts";
import { instant, integer } from "./arg-values.ts";
import {
  type Command,
  type CommandGroup,
  JSON_OPTION,
  parseCommandArgs,
  positionals,
  usageError,
} from "./command.ts";
import { answer, milliseconds, printFields, readableTime, timeWithAge } from "./format.ts";
import { type Io, printTable } from "./io.ts";

const DELIVERY_ID = "<delivery-id>";
const STATUSES = ["pending", "succeeded", "failed", "skipped", "cancelled"];

/**
 * `200 in 45ms`, `timeout after 15.0s`, `500 (http_status) in 30ms`, why a cancelled attempt was
 * superseded, or `-` before an attempt.
 */
export function deliveryResult(d: Delivery): string {
  const took = d.duration_ms === null ? "" : ` in ${milliseconds(d.duration_ms)}`;
  if (d.response_status !== null) {
    return `${d.response_status}${d.error && d.error !== "http_status" ? ` (${d.error})` : ""}${took}`;
  }
  // Cancelled because another attempt of the event to the endpoint succeeded (ADR 19): never sent.
  if (d.error === "superseded") return "superseded (another attempt of this event succeeded; not sent)";
  if (d.error) return `${d.error}${took}`;
  return "-";
}

function printDelivery(io: Io, d: Delivery): void {
  printFields(io, [
    ["id", d.id],
    ["status", d.status],
    ["endpoint", d.webhook_id],
    ["url", d.url],
    ["event", `${d.event_id} (${d.event_type})`],
    ["attempt", `${d.attempt} (${d.trigger})`],
    ["result", deliveryResult(d)],
    ["created", timeWithAge(d.created_at)],
    ["scheduled", timeWithAge(d.scheduled_at)],
    ["attempted", timeWithAge(d.attempted_at)],
    ["next attempt", timeWithAge(d.next_attempt_at)],
    ...(d.erased_at
      ? [
          ["erased", `${timeWithAge(d.erased_at)}: its event and the response body are gone`] as [
            string,
            string,
          ],
        ]
      : []),
  ]);
  if (d.response_body) {
    io.out("\nresponse body:");
    io.out(
      d.response_body
        .split("\n")
        .map((l) => `  ${l}`)
        .join("\n"),
    );
  }
}

const list: Command = {
  name: "deliveries list",
  usage:
    "<webhook-id> [--status S] [--event-type T] [--event-id ID] [--since TIME] [--until TIME] [--limit N] [--cursor C] [--all] [--json]",
  summary: "List an endpoint's delivery attempts (each attempt is a record), newest first.",
  details: "TIME is ISO 8601 (2026-11-21T10:00:00Z), a date, or a duration ago (30m, 2h, 3d).",
  options: [
    ["--status S", STATUSES.join(", ")],
    ["--event-type T", "Only this event type"],
    ["--event-id ID", "Only attempts of this event (evt_...)"],
    ["--since TIME", "Only records created at or after TIME"],
    ["--until TIME", "Only records created before TIME"],
    ["--limit N", "Records per page, 1-100 (default 50)"],
    ["--cursor C", "Continue from a previous page's next_cursor"],
    ["--all", "Follow next_cursor through every page"],
    JSON_OPTION,
  ],
  examples: [
    "npx herald deliveries list 3f1c9e2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b --status failed --since 1d",
    "npx herald deliveries list 3f1c9e2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b --all --json | jq '.data | length'",
  ],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {
      status: { type: "string" },
      "event-type": { type: "string" },
      "event-id": { type: "string" },
      since: { type: "string" },
      until: { type: "string" },
      limit: { type: "string" },
      cursor: { type: "string" },
      all: { type: "boolean", default: false },
    });
    const [webhookId] = positionals(this, rest, ["<webhook-id>"]);
    if (values.status !== undefined && !STATUSES.includes(values.status)) {
      throw usageError(this, `--status must be one of ${STATUSES.join(", ")}, not "${values.status}"`);
    }
    const query = {
      status: values.status as Delivery["status"] | undefined,
      event_type: values["event-type"] as EventType | undefined,
      event_id: values["event-id"],
      since: values.since === undefined ? undefined : instant(this, "--since", values.since),
      until: values.until === undefined ? undefined : instant(this, "--until", values.until),
      limit: values.limit === undefined ? undefined : integer(this, "--limit", values.limit, 1, 100),
    };
    const api = connectApi(io, deps);
    const page = async (cursor: string | undefined) =>
      (
        await api.call(
          api.client.GET("/api/v1/webhooks/{id}/deliveries", {
            params: { path: { id: webhookId! }, query: { ...query, cursor } },
          }),
        )
      ).data;
    const result = await listPages(page, { all: values.all, cursor: values.cursor });
    return answer(io, values.json, result, () => {
      printTable(
        io,
        result.data.map((d) => ({
          id: d.id,
          "created (utc)": readableTime(d.created_at),
          "event type": d.event_type,
          "event id": d.event_id,
          attempt: `${d.attempt} ${d.trigger}`,
          status: d.status,
          result: deliveryResult(d),
        })),
        ["id", "created (utc)", "event type", "event id", "attempt", "status", "result"],
      );
      if (result.next_cursor) {
        io.out(`\nMore: npx herald deliveries list ${webhookId} --cursor ${result.next_cursor} (or --all)`);
      }
    });
  },
};

const get: Command = {
  name: "deliveries get",
  usage: `${DELIVERY_ID} [--json]`,
  summary: "Show one delivery attempt, with the receiver's answer.",
  options: [JSON_OPTION],
  examples: ["npx herald deliveries get 8a6e0f3c-2d4b-4c1a-9e7f-5b3d2c1a0f9e"],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {});
    const [id] = positionals(this, rest, [DELIVERY_ID]);
    const api = connectApi(io, deps);
    const { data } = await api.call(
      api.client.GET("/api/v1/webhooks/deliveries/{delivery_id}", { params: { path: { delivery_id: id! } } }),
    );
    return answer(io, values.json, data, () => {
      printDelivery(io, data);
    });
  },
};

const retry: Command = {
  name: "deliveries retry",
  usage: `${DELIVERY_ID} [--json]`,
  summary: "Send a delivery's event again, by hand.",
  details:
    "Same event id, fresh timestamp and signature. A manual attempt that fails is not retried automatically. A disabled endpoint must be enabled first.",
  options: [JSON_OPTION],
  examples: ["npx herald deliveries retry 8a6e0f3c-2d4b-4c1a-9e7f-5b3d2c1a0f9e"],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {});
    const [id] = positionals(this, rest, [DELIVERY_ID]);
    const api = connectApi(io, deps);
    const { data } = await api.call(
      api.client.POST("/api/v1/webhooks/deliveries/{delivery_id}/retry", {
        params: { path: { delivery_id: id! } },
      }),
    );
    return answer(io, values.json, data, () => {
      io.out(`Queued attempt ${data.attempt} of event ${data.event_id} as delivery ${data.id}.\n`);
      printDelivery(io, data);
    });
  },
};

export const deliveriesGroup: CommandGroup = {
  name: "deliveries",
  summary: "Inspect delivery attempts and replay them by hand.",
  commands: [list, get, retry],
};
