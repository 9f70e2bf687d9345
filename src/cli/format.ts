import type { Io } from "./io.ts";

/** `2026-11-21 10:00:05`: an API timestamp (UTC) as people read it; "-" for none. */
export function readableTime(iso: string | null | undefined): string {
  if (!iso) return "-";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toISOString().slice(0, 19).replace("T", " ");
}

/** "5s", "3m", "2h", "4d": a rough length of time for relative timestamps. */
export function roughDuration(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.round(s / 60)}m`;
  if (s < 86_400) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86_400)}d`;
}

/** `2026-11-21 10:00:05 UTC (3m ago)`, or `(in 5m)` for a time to come. */
export function timeWithAge(iso: string | null | undefined, now = new Date()): string {
  if (!iso) return "-";
  const diff = now.getTime() - Date.parse(iso);
  if (Number.isNaN(diff)) return iso;
  const age = diff >= 0 ? `${roughDuration(diff)} ago` : `in ${roughDuration(diff)}`;
  return `${readableTime(iso)} UTC (${age})`;
}

/** `45ms` or `1.2s`. */
export function milliseconds(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "-";
  return Math.abs(ms) < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`;
}

/** Prints label/value pairs as an aligned block. */
export function printFields(io: Io, fields: [string, unknown][]): void {
  const width = Math.max(...fields.map(([label]) => label.length));
  const text = (v: unknown) =>
    v === null || v === undefined || v === "" ? "-" : Array.isArray(v) ? v.join(", ") : String(v);
  io.out(fields.map(([label, value]) => `${label.padEnd(width)}  ${text(value)}`.trimEnd()).join("\n"));
}

/** Pretty JSON, every line indented. */
export function indentedJson(value: unknown, indent = "  "): string {
  return JSON.stringify(value, null, 2)
    .split("\n")
    .map((l) => indent + l)
    .join("\n");
}

/** Prints exactly the API's JSON (compact, one line). */
export function printJson(io: Io, value: unknown): void {
  io.out(JSON.stringify(value));
}

/** A command's answer: the JSON of `value` under --json, otherwise what `human` prints. Exit code 0. */
export function answer(io: Io, json: boolean | undefined, value: unknown, human: () => void): 0 {
  if (json) printJson(io, value);
  else human();
  return 0;
}
