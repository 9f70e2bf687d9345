/** Where a command writes, and the environment it reads; passed in so commands are testable. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
}

/** An error to show the user as one line, with a non-zero exit. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
    this.name = "CliError";
  }
}

/** Prints rows as an aligned table with the given columns. */
export function printTable(io: Io, rows: Record<string, unknown>[], columns: string[]): void {
  if (rows.length === 0) {
    io.out("(none)");
    return;
  }
  const cell = (v: unknown) =>
    v === null || v === undefined ? "-" : Array.isArray(v) ? v.join(",") : String(v);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  io.out(line(columns.map((c) => c.toUpperCase())));
  for (const r of rows) io.out(line(columns.map((c) => cell(r[c]))));
}
