import { connectApi } from "./api.ts";
import { integer } from "./arg-values.ts";
import { type Command, type CommandGroup, JSON_OPTION, parseCommandArgs, positionals } from "./command.ts";
import { answer, printFields, timeWithAge } from "./format.ts";

const create: Command = {
  name: "portal create",
  usage: "[--expires-in SECONDS] [--webhook ID]... [--json]",
  summary: "Create a customer portal link for the token's project.",
  details:
    "The link opens a restricted console: the customer manages their endpoints, sees and retries their deliveries and rotates their secret, nothing else. It works until it expires or is revoked; treat it as a secret.",
  options: [
    ["--expires-in SECONDS", "Lifetime, 60-86400 (default 3600)"],
    ["--webhook ID", "Limit the portal to this endpoint (repeat for more); default: every endpoint"],
    JSON_OPTION,
  ],
  examples: [
    "herald portal create --expires-in 7200 --webhook 3f1c9e2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b",
    "herald portal create --json | jq -r .url",
  ],
  api: true,
  async run(args, io, deps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {
      "expires-in": { type: "string" },
      webhook: { type: "string", multiple: true },
    });
    positionals(this, rest, []);
    const api = connectApi(io, deps);
    const { data } = await api.call(
      api.client.POST("/api/v1/portal-sessions", {
        body: {
          ...(values["expires-in"] !== undefined && {
            expires_in: integer(this, "--expires-in", values["expires-in"], 60, 86_400),
          }),
          ...(values.webhook && { webhook_ids: values.webhook }),
        },
      }),
    );
    return answer(io, values.json, data, () => {
      printFields(io, [
        ["url", data.url],
        ["id", data.id],
        ["expires", timeWithAge(data.expires_at)],
        ["endpoints", data.webhook_ids ? data.webhook_ids.join(", ") : "all of the project's"],
      ]);
      io.out(`\nRevoke it with: herald portal revoke ${data.id}`);
    });
  },
};

const revoke: Command = {
  name: "portal revoke",
  usage: "<portal-session-id>",
  summary: "Revoke a customer portal link; browsers that opened it are signed out at once.",
  options: [],
  examples: ["herald portal revoke 0b8f7c1e-2a3d-4e5f-8a9b-0c1d2e3f4a5b"],
  api: true,
  async run(args, io, deps) {
    const { positionals: rest } = parseCommandArgs(this, args, {});
    const [id] = positionals(this, rest, ["<portal-session-id>"]);
    const api = connectApi(io, deps);
    await api.call(api.client.DELETE("/api/v1/portal-sessions/{id}", { params: { path: { id: id! } } }));
    io.out(`Revoked portal session ${id}.`);
    return 0;
  },
};

export const portalGroup: CommandGroup = {
  name: "portal",
  summary: "Customer portal links: a restricted console your customers can open or embed.",
  commands: [create, revoke],
};
