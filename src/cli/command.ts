import { type ParseArgsConfig, parseArgs } from "node:util";
import { CliError, type Io } from "./io.ts";

/** What a command may get from its caller besides argv and io; tests pass an in-process fetch. */
export interface CliDeps {
  /** The fetch the API client uses (default: the global one). */
  fetch?: ((request: Request) => Promise<Response>) | undefined;
  /** Stops a long-running command (listen); without it, SIGINT and SIGTERM do. */
  signal?: AbortSignal | undefined;
}

/** One runnable command with everything its --help shows. */
export interface Command {
  /** The words after `herald`: "webhooks create". */
  name: string;
  /** Arguments and options after the name, as the usage line shows them. */
  usage: string;
  /** One line for the command lists. */
  summary: string;
  /** A few more sentences for --help, when the summary is not enough. */
  details?: string;
  /** [flag, explanation] rows; --help is added. */
  options: [string, string][];
  examples: string[];
  /** Whether the command calls the API (its help then names HERALD_URL and HERALD_TOKEN). */
  api: boolean;
  run(args: string[], io: Io, deps: CliDeps): Promise<number>;
}

/** A command family such as `herald webhooks`. */
export interface CommandGroup {
  name: string;
  summary: string;
  commands: Command[];
}

export const JSON_OPTION: [string, string] = ["--json", "Print the API's JSON answer instead of text"];
const HELP_OPTION: [string, string] = ["-h, --help", "Show this help"];
export const API_ENVIRONMENT =
  "Environment: HERALD_URL (default http://localhost:8080) and HERALD_TOKEN (an API token, see npx herald tokens create).";

function optionRows(rows: [string, string][]): string {
  const width = Math.max(...rows.map(([flag]) => flag.length));
  return rows.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`).join("\n");
}

/** The --help text of one command: usage, what it does, options, example. */
export function commandHelp(c: Command): string {
  const parts = [`Usage: npx herald ${c.name}${c.usage ? ` ${c.usage}` : ""}`, "", c.summary];
  if (c.details) parts.push("", c.details);
  parts.push("", "Options:", optionRows([...c.options, HELP_OPTION]));
  parts.push("", c.examples.length > 1 ? "Examples:" : "Example:", ...c.examples.map((e) => `  ${e}`));
  if (c.api) parts.push("", API_ENVIRONMENT);
  return `${parts.join("\n")}\n`;
}

/** The --help text of a group: its commands, one line each. */
export function groupHelp(g: CommandGroup): string {
  const rows = g.commands.map((c): [string, string] => [c.name.slice(g.name.length + 1), c.summary]);
  const parts = [
    `Usage: npx herald ${g.name} <command> [options]`,
    "",
    g.summary,
    "",
    "Commands:",
    optionRows(rows),
    "",
    `Run "npx herald ${g.name} <command> --help" for a command's options and an example.`,
  ];
  if (g.commands.some((c) => c.api)) parts.push(API_ENVIRONMENT);
  return `${parts.join("\n")}\n`;
}

const wantsHelp = (args: string[]) => {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h");
};

/** Runs a command, or prints its help when asked. */
export async function runCommand(c: Command, args: string[], io: Io, deps: CliDeps): Promise<number> {
  if (wantsHelp(args)) {
    io.out(commandHelp(c));
    return 0;
  }
  return c.run(args, io, deps);
}

/** Dispatches `herald <group> <sub> ...`; no sub prints the group's help (exit 2), --help prints it (exit 0). */
export async function runGroup(g: CommandGroup, argv: string[], io: Io, deps: CliDeps): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === "--help" || sub === "-h" || sub === "help") {
    io.out(groupHelp(g));
    return sub === undefined ? 2 : 0;
  }
  const command = g.commands.find((c) => c.name === `${g.name} ${sub}`);
  if (!command) throw new CliError(`unknown command "${g.name} ${sub}"; see npx herald ${g.name} --help`, 2);
  return runCommand(command, rest, io, deps);
}

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * Parses a command's arguments strictly: an unknown option or a missing value is a usage error (exit 2).
 * `--json` and `--help` are always accepted.
 */
export function parseCommandArgs<const O extends Options>(command: Command, args: string[], options: O) {
  try {
    return parseArgs({
      args,
      options: {
        ...options,
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      } as const,
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    throw usageError(command, (e as Error).message.replace(/\.$/, ""));
  }
}

/** A wrong invocation: one line naming the command's help, exit 2. */
export function usageError(command: Command, message: string): CliError {
  return new CliError(`${message}; see npx herald ${command.name} --help`, 2);
}

/** The positional arguments a command needs, by name; a missing or extra one is a usage error. */
export function positionals(command: Command, given: string[], names: string[]): string[] {
  if (given.length < names.length) {
    throw usageError(command, `npx herald ${command.name} needs ${names.slice(given.length).join(" and ")}`);
  }
  if (given.length > names.length) {
    throw usageError(command, `unexpected argument "${given[names.length]}"`);
  }
  return given;
}
