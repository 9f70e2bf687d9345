import { connectApi } from "./api.ts";
import { type Command, JSON_OPTION, parseCommandArgs, positionals } from "./command.ts";
import { answer } from "./format.ts";
import { CliError } from "./io.ts";

/** `herald console`: a one-time sign-in link for the browser console, made with the API token. */
export const consoleCommand: Command = {
  name: "console",
  usage: "[--json]",
  summary: "Print a one-time link that signs a browser in to the Herald Console.",
  details:
    "The link works once and for five minutes; the browser then holds a session cookie and the token stays here. The console is also at <HERALD_URL>/console, where you can paste a token instead.",
  options: [JSON_OPTION],
  examples: ["herald console", 'xdg-open "$(herald console --json | jq -r .url)"'],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {});
    positionals(this, rest, []);
    const api = connectApi(io, deps);
    const doFetch = deps.fetch ?? ((r: Request) => fetch(r));
    let response: Response;
    try {
      response = await doFetch(
        new Request(`${api.baseUrl}/console/sign-in/links`, {
          method: "POST",
          headers: { Authorization: `Bearer ${io.env.HERALD_TOKEN?.trim()}` },
        }),
      );
    } catch (e) {
      throw new CliError(`cannot reach Herald at ${api.baseUrl} (${(e as Error).message}); is it running?`);
    }
    if (!response.ok) {
      const problem = (await response.json().catch(() => ({}))) as { code?: string; detail?: string };
      throw new CliError(
        `${response.status} ${problem.code ?? "error"}: ${problem.detail ?? "the console did not answer"}${response.status === 401 ? " Check HERALD_TOKEN." : ""}`,
      );
    }
    const data = (await response.json()) as { url: string; expires_at: string };
    return answer(io, values.json, data, () => {
      io.out(`Open this link to sign in (it works once, within 5 minutes):\n\n  ${data.url}\n`);
    });
  },
};
