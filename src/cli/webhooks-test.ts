import type { EventType, PublishEvent } from "../../clients/typescript/client.ts";
import { connectApi } from "./api.ts";
import { type Command, JSON_OPTION, parseCommandArgs, positionals, usageError } from "./command.ts";
import { answer, printFields } from "./format.ts";
import { filterOption, ID, jsonOption } from "./webhooks-options.ts";

export const test: Command = {
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

export const filterTest: Command = {
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
