import { readFileSync } from "node:fs";
import {
  type BatchEventResult,
  HeraldApiError,
  isPublished,
  MAX_BATCH_EVENTS,
  type PublishBatchEvent,
} from "../../clients/typescript/client.ts";
import { type Api, apiErrorMessage, connectApi, unreachableMessage } from "./api.ts";
import { type CliDeps, type Command, usageError } from "./command.ts";
import { printJson } from "./format.ts";
import { CliError, type Io } from "./io.ts";

/**
 * Largest batch body the CLI sends: under the API's 256 KiB request limit with room to spare, so a
 * file of large events goes in smaller batches rather than being refused whole (413).
 */
export const MAX_BATCH_BYTES = 240 * 1024;

/** One non-blank line of the file: where it is, and the event it holds (or why it holds none). */
type Line = { line: number; event: PublishBatchEvent } | { line: number; error: string };

/** What happened to one line, as --json prints it. */
export type LineResult = { line: number } & (
  | { status: 202; event: Extract<BatchEventResult, { event: unknown }>["event"]; replayed: boolean }
  | { status: number | null; error: string }
);

/** Reads a JSON Lines file: one event object per line; blank lines are skipped, bad ones are reported by number. */
export function readEventLines(text: string): Line[] {
  const lines: Line[] = [];
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    if (raw.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      lines.push({ line: i + 1, error: `not JSON (${(e as Error).message})` });
      continue;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      lines.push({
        line: i + 1,
        error: 'must be a JSON object like {"type": "message.sent", "data": {...}}',
      });
      continue;
    }
    // The server checks the rest, per event, and names the field.
    lines.push({ line: i + 1, event: value as PublishBatchEvent });
  }
  return lines;
}

/** Groups events into batches of at most MAX_BATCH_EVENTS and (unless one event alone is larger) MAX_BATCH_BYTES. */
export function batchesOf<T extends { event: PublishBatchEvent }>(items: readonly T[]): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  const encoder = new TextEncoder();
  for (const item of items) {
    const size = encoder.encode(JSON.stringify(item.event)).length + 1;
    if (current.length > 0 && (current.length >= MAX_BATCH_EVENTS || bytes + size > MAX_BATCH_BYTES)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** A problem as one line, its paths relative to the event (`data.channel`, not `body.events.3.data.channel`). */
function problemLine(status: number, problem: unknown): string {
  const e = new HeraldApiError(status, problem);
  const at = (path: string) => path.replace(/^body\.events\.\d+\.?/, "") || "the event";
  const issues = e.errors.map((i) => `${at(i.path)}: ${i.message}`).join("; ");
  return `${e.status} ${e.code}: ${e.detail}${issues ? ` (${issues})` : ""}`;
}

async function sendBatch(
  api: Api,
  batch: { line: number; event: PublishBatchEvent }[],
): Promise<LineResult[]> {
  const { response, data, error } = await api.client
    .POST("/api/v1/events/batch", { body: { events: batch.map((b) => b.event) } })
    .catch((e: unknown) => {
      // Unreachable: the same one line as every other command, and nothing more is sent.
      throw new CliError(unreachableMessage(api.baseUrl, e));
    });
  if (!response.ok || !data) {
    // The whole batch was refused (401, 413, 429, 503...): every line in it failed with that answer.
    const message = apiErrorMessage(new HeraldApiError(response.status, error), api.baseUrl);
    if (response.status === 401) throw new CliError(message);
    return batch.map(({ line }) => ({ line, status: response.status, error: message }));
  }
  return batch.map(({ line }, i): LineResult => {
    const r = data.data[i];
    if (r === undefined) return { line, status: null, error: "the answer holds no result for this event" };
    if (isPublished(r)) return { line, status: 202, event: r.event, replayed: r.replayed };
    return { line, status: r.status, error: problemLine(r.status, r.problem) };
  });
}

/**
 * `events send --file FILE`: every event of a JSON Lines file, in batches of up to 100 (POST
 * /events/batch). Prints each failed line with its number on stderr and one summary line; exits 1 when
 * any line failed.
 */
export async function sendEventsFile(
  command: Command,
  path: string,
  json: boolean | undefined,
  io: Io,
  deps: CliDeps,
): Promise<number> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw usageError(command, `cannot read --file ${path}: ${(e as Error).message}`);
  }
  const lines = readEventLines(text);
  if (lines.length === 0)
    throw usageError(command, `--file ${path} holds no events (one JSON object per line)`);
  const api = connectApi(io, deps);

  const results: LineResult[] = lines.flatMap((l) =>
    "error" in l ? [{ line: l.line, status: null, error: l.error }] : [],
  );
  const events = lines.flatMap((l) => ("event" in l ? [l] : []));
  for (const batch of batchesOf(events)) results.push(...(await sendBatch(api, batch)));
  results.sort((a, b) => a.line - b.line);

  const published = results.filter((r) => r.status === 202);
  const replayed = published.filter((r) => "replayed" in r && r.replayed).length;
  const failed = results.length - published.length;
  if (json) {
    printJson(io, { published: published.length, replayed, failed, results });
  } else {
    for (const r of results) if ("error" in r) io.err(`line ${r.line}: ${r.error}`);
    io.out(
      `Published ${published.length} of ${results.length} ${results.length === 1 ? "event" : "events"} from ${path}` +
        `${replayed > 0 ? ` (${replayed} already published with their idempotency key)` : ""}` +
        `${failed > 0 ? `; ${failed} failed` : ""}.`,
    );
  }
  return failed > 0 ? 1 : 0;
}
