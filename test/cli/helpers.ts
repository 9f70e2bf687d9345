import type { CliDeps } from "../../src/cli/command.ts";
import type { Io } from "../../src/cli/io.ts";
import { runCli } from "../../src/cli/main.ts";
import { type ApiHarness, makeApiHarness } from "../support/api-harness.ts";
import { PATIENCE_MS } from "../support/patience.ts";

/** An Io that records what a command writes, and lets a test wait for a line. */
export interface RecordingIo {
  io: Io;
  out: string[];
  err: string[];
  /** Resolves with the first stdout line matching `pattern`, or rejects after `timeoutMs`. */
  waitForOut(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** The same for stderr. */
  waitForErr(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

export function recordingIo(env: Record<string, string | undefined> = {}): RecordingIo {
  const out: string[] = [];
  const err: string[] = [];
  const waiters: { lines: string[]; pattern: RegExp; resolve: (line: string) => void }[] = [];
  const write = (into: string[]) => (text: string) => {
    for (const line of text.replace(/\n$/, "").split("\n")) {
      into.push(line);
      for (const w of [...waiters]) {
        if (w.lines === into && w.pattern.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  };
  const waitFor = (lines: string[], pattern: RegExp, timeoutMs = PATIENCE_MS) => {
    const seen = lines.find((l) => pattern.test(l));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no line matched ${pattern} within ${timeoutMs} ms:\n${lines.join("\n")}`)),
        timeoutMs,
      );
      waiters.push({
        lines,
        pattern,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
      });
    });
  };
  return {
    io: { out: write(out), err: write(err), env },
    out,
    err,
    waitForOut: (pattern, timeoutMs) => waitFor(out, pattern, timeoutMs),
    waitForErr: (pattern, timeoutMs) => waitFor(err, pattern, timeoutMs),
  };
}
/** One finished CLI run. */
export interface CliRun {
  code: number;
  out: string[];
  err: string[];
  /** stdout as one text. */
  stdout: string;
  /** stdout parsed as JSON (for --json runs). */
  json<T = unknown>(): T;
}

export interface CliHarness {
  api: ApiHarness;
  token: string;
  /** The typed client for the same project, to check what the CLI did. */
  client: ReturnType<ApiHarness["client"]>;
  env: Record<string, string>;
  /** Runs `herald <argv>` in-process against the app. */
  run(argv: string[], env?: Record<string, string | undefined>, deps?: CliDeps): Promise<CliRun>;
}

/** The CLI wired to an in-process Herald app (in-memory store) with a fresh token. */
export async function cliHarness(options: { allowHttpUrls?: boolean } = {}): Promise<CliHarness> {
  const api = await makeApiHarness({ allowHttpUrls: options.allowHttpUrls ?? false });
  const { token } = await api.newToken();
  const env = { HERALD_URL: api.baseUrl, HERALD_TOKEN: token };
  return {
    api,
    token,
    client: api.client(token),
    env,
    async run(argv, extraEnv = {}, deps = { fetch: api.fetch }) {
      const rec = recordingIo({ ...env, ...extraEnv });
      const code = await runCli(argv, rec.io, deps);
      const stdout = rec.out.join("\n");
      return {
        code,
        out: rec.out,
        err: rec.err,
        stdout,
        json: <T>() => JSON.parse(stdout) as T,
      };
    },
  };
}

/** A receiver URL that is never contacted (no delivery engine runs behind the harness). */
let n = 0;
/** A command line written as one string, split at each space (for arguments that hold none). */
export const argv = (line: string): string[] => line.split(" ");

export const receiverUrl = () => `https://receiver.invalid/cli/${++n}`;
