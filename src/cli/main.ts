import { VERSION } from "../version.ts";
import { API_ENVIRONMENT, type CliDeps, type CommandGroup, runCommand, runGroup } from "./command.ts";
import { consoleCommand } from "./console.ts";
import { deliveriesGroup } from "./deliveries.ts";
import { erasuresGroup, settingsGroup } from "./erasures.ts";
import { eventsGroup } from "./events.ts";
import { CliError, type Io } from "./io.ts";
import { listenCommand } from "./listen.ts";
import { portalGroup } from "./portal.ts";
import { webhooksGroup } from "./webhooks.ts";

const GROUPS: CommandGroup[] = [
  webhooksGroup,
  deliveriesGroup,
  eventsGroup,
  portalGroup,
  erasuresGroup,
  settingsGroup,
];

function topHelp(): string {
  const rows: [string, string][] = [
    ...GROUPS.flatMap((g) => g.commands.map((c): [string, string] => [c.name, c.summary])),
    [listenCommand.name, listenCommand.summary],
    [consoleCommand.name, consoleCommand.summary],
    ["tokens create|list|revoke", "Manage API tokens (talks to the database directly)"],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  return [
    "Usage: npx herald <command> [options]",
    "",
    "Herald's command line: manage webhook endpoints, publish events, inspect and replay deliveries,",
    "and receive deliveries locally.",
    "",
    "Commands:",
    ...rows.map(([name, summary]) => `  ${name.padEnd(width)}  ${summary}`),
    "",
    "Options:",
    "  --json         Print the API's JSON (commands that call the API)",
    "  -h, --help     Show help (also after any command)",
    "  -v, --version  Print Herald's version",
    "",
    API_ENVIRONMENT,
    "",
    "A token (database access: DATABASE_URL, MONGODB_URI or HERALD_DATA_DIR, like the server):",
    "  npx herald tokens create      # then: export HERALD_TOKEN=hrld_...",
    "",
    "A local loop in three terminals:",
    "  1$ HERALD_ALLOW_HTTP_URLS=true HERALD_ALLOW_PRIVATE_NETWORKS=true npm start",
    "  2$ npx herald listen --events message.delivered,message.bounced   # registers itself, prints its secret",
    "  3$ npx herald events send message.delivered                       # listen prints it, verified",
    "",
    'Run "npx herald <command> --help" for a command\'s options and an example.',
    "",
  ].join("\n");
}

/** Runs one CLI invocation and returns its exit code. `deps.fetch` lets tests talk to an app in-process. */
export async function runCli(argv: string[], io: Io, deps: CliDeps = {}): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case undefined:
      case "--help":
      case "-h":
        io.out(topHelp());
        return cmd ? 0 : 2;
      case "help":
        if (rest.length) return await runCli([...rest, "--help"], io, deps);
        io.out(topHelp());
        return 0;
      case "--version":
      case "-v":
        io.out(VERSION);
        return 0;
      case "listen":
        return await runCommand(listenCommand, rest, io, deps);
      case "console":
        return await runCommand(consoleCommand, rest, io, deps);
      case "tokens": {
        // Loaded on demand: it brings the database driver, which no other command needs.
        const { tokensCommand } = await import("./tokens.ts");
        return await tokensCommand(rest, io);
      }
      default: {
        const group = GROUPS.find((g) => g.name === cmd);
        if (!group) throw new CliError(`unknown command "${cmd}"; run npx herald --help`, 2);
        return await runGroup(group, rest, io, deps);
      }
    }
  } catch (e) {
    if (e instanceof CliError) {
      io.err(`herald: ${e.message}`);
      return e.exitCode;
    }
    io.err(`herald: ${(e as Error).message}`);
    return 1;
  }
}

const isMain =
  import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("/src/cli/main.ts");
if (isMain) {
  const code = await runCli(process.argv.slice(2), {
    out: (t) => process.stdout.write(t.endsWith("\n") ? t : `${t}\n`),
    err: (t) => process.stderr.write(t.endsWith("\n") ? t : `${t}\n`),
    env: process.env,
  });
  process.exit(code);
}
