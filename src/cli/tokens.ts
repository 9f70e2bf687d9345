import { parseArgs } from "node:util";
import { systemClock, systemIds } from "../adapters/system.ts";
import { tokenUseCases } from "../app/tokens.ts";
import { UUID_PATTERN } from "../domain/ids.ts";
import { CliError, type Io, printTable } from "./io.ts";
import { openStore } from "./store.ts";

export const TOKENS_HELP = `Usage: npx herald tokens <command>

Manage API tokens. Talks to the database directly, as the server does: DATABASE_URL, MONGODB_URI,
or the embedded one in HERALD_DATA_DIR.

Commands:
  create [--tenant UUID] [--project UUID] [--name TEXT] [--json]
                     Create a token (shown once). Ids are generated when not given: without
                     --tenant and --project the token belongs to a new tenant and project and sees
                     nothing another token created. A second token for the same project:
                       npx herald tokens create --tenant <tenant_id> --project <project_id>
                     with the ids the first one printed (--json: tenant_id, project_id).
  list [--json]      List tokens (never the tokens themselves).
  revoke <id>        Revoke a token by its id; it answers 401 from then on.
`;

/** herald tokens create | list | revoke */
export async function tokensCommand(argv: string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv;
  if (!sub || sub === "--help" || sub === "-h" || sub === "help") {
    io.out(TOKENS_HELP);
    return sub ? 0 : 2;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      tenant: { type: "string" },
      project: { type: "string" },
      name: { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    io.out(TOKENS_HELP);
    return 0;
  }
  for (const [flag, v] of [
    ["--tenant", values.tenant],
    ["--project", values.project],
  ] as const) {
    if (v !== undefined && !UUID_PATTERN.test(v)) throw new CliError(`${flag} must be a UUID`);
  }
  if (!["create", "list", "revoke"].includes(sub)) {
    throw new CliError(`unknown command "tokens ${sub}"; see npx herald tokens --help`, 2);
  }
  const store = await openStore(io.env);
  try {
    const tokens = tokenUseCases({ tokens: store.repos.tokens, clock: systemClock, ids: systemIds });
    switch (sub) {
      case "create": {
        const { token, record } = await tokens.create({
          tenantId: values.tenant?.toLowerCase(),
          projectId: values.project?.toLowerCase(),
          name: values.name ?? null,
        });
        if (values.json) {
          io.out(JSON.stringify({ token, tenant_id: record.tenantId, project_id: record.projectId }));
        } else {
          io.out(`Token (shown once, keep it safe):\n  ${token}\n`);
          io.out(`id          ${record.id}\ntenant_id   ${record.tenantId}\nproject_id  ${record.projectId}`);
          io.out(
            `\nIt sees only what tokens of this project create. Another token for the same project:\n  npx herald tokens create --tenant ${record.tenantId} --project ${record.projectId}`,
          );
        }
        return 0;
      }
      case "list": {
        const list = await tokens.list();
        const rows = list.map((t) => ({
          id: t.id,
          prefix: `${t.prefix}…`,
          name: t.name,
          tenant_id: t.tenantId,
          project_id: t.projectId,
          created_at: t.createdAt.toISOString(),
          revoked_at: t.revokedAt?.toISOString() ?? null,
        }));
        if (values.json) io.out(JSON.stringify({ data: rows }));
        else printTable(io, rows, ["id", "prefix", "name", "project_id", "created_at", "revoked_at"]);
        return 0;
      }
      case "revoke": {
        const id = positionals[0];
        if (!id) throw new CliError("tokens revoke needs the token id (see: npx herald tokens list)");
        if (!(await tokens.revoke(id))) throw new CliError(`no active token with id ${id}`);
        io.out(values.json ? JSON.stringify({ id, revoked: true }) : `Revoked ${id}`);
        return 0;
      }
      default:
        throw new CliError(`unknown command "tokens ${sub}"; see npx herald tokens --help`);
    }
  } finally {
    await store.close();
  }
}
