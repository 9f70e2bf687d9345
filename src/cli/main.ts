import { CliError, type Io } from "./io.ts";
import { tokensCommand } from "./tokens.ts";

const HELP = `Usage: herald <command> [options]

Commands:
  tokens create|list|revoke   Manage API tokens (database access)

Run "herald <command> --help" for a command's options.
`;

/** Runs one CLI invocation and returns its exit code. */
export async function runCli(argv: string[], io: Io): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case undefined:
      case "help":
      case "--help":
      case "-h":
        io.out(HELP);
        return cmd ? 0 : 2;
      case "tokens":
        return await tokensCommand(rest, io);
      default:
        throw new CliError(`unknown command "${cmd}"; run herald --help`);
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

const isMain = import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("/src/cli/main.ts");
if (isMain) {
  const code = await runCli(process.argv.slice(2), {
    out: (t) => process.stdout.write(t.endsWith("\n") ? t : `${t}\n`),
    err: (t) => process.stderr.write(t.endsWith("\n") ? t : `${t}\n`),
    env: process.env,
  });
  process.exit(code);
}
