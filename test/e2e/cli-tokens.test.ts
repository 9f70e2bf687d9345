import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  findListed,
  herald,
  heraldBin,
  type ListedToken,
  lines,
  parseCreated,
  run,
  TEST_MASTER_KEY,
} from "../support/herald-cli.ts";
import { type HeraldProcess, startHerald } from "../support/herald-process.ts";
import { freshStore } from "../support/store.ts";

// The tokens CLI as a user runs it: a real process (node src/cli/main.ts, as `npm run -s cli` does, and the
// package's bin/herald.mjs under node) against the run's PostgreSQL, checked by exit code, stdout and stderr.

const TOKEN = /^hrld_[A-Za-z0-9_-]{43}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const store = await freshStore("herald_cli");
const env = { ...store.env, HERALD_MASTER_KEY: TEST_MASTER_KEY };

afterAll(async () => {
  await store.cleanup();
});

/** stderr is one non-empty line starting with "herald: ", stdout is empty, the exit code is non-zero. */
function expectOneLineFailure(r: { code: number | null; stdout: string; stderr: string }, mention: RegExp) {
  expect({
    code: r.code === 0 ? 0 : "non-zero",
    stdout: r.stdout,
    stderrLines: lines(r.stderr).length,
  }).toEqual({
    code: "non-zero",
    stdout: "",
    stderrLines: 1,
  });
  expect(r.stderr).toMatch(/^herald: \S.*\n$/);
  expect(r.stderr).toMatch(mention);
  expect(r.stderr).not.toMatch(/\n\s+at /);
}

async function listTokens(): Promise<ListedToken[]> {
  const r = await herald(["tokens", "list", "--json"], env);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toBe("");
  expect(lines(r.stdout)).toHaveLength(1);
  return (JSON.parse(r.stdout) as { data: ListedToken[] }).data;
}

describe("herald tokens create", () => {
  it("--json prints exactly one JSON object on stdout and nothing else; ids are generated", async () => {
    const [a, b] = await Promise.all([
      herald(["tokens", "create", "--json"], env),
      herald(["tokens", "create", "--json"], env),
    ]);
    for (const r of [a!, b!]) {
      expect(r.stderr).toBe("");
      expect(r.stdout).toMatch(/^\{.*\}\n$/);
      const issued = parseCreated(r);
      expect(Object.keys(issued).sort()).toEqual(["project_id", "tenant_id", "token"]);
      expect(issued.token).toMatch(TOKEN);
      expect(issued.tenant_id).toMatch(UUID);
      expect(issued.project_id).toMatch(UUID);
      expect(issued.tenant_id).not.toBe(issued.project_id);
    }
    const [x, y] = [parseCreated(a!), parseCreated(b!)];
    expect(x.token).not.toBe(y.token);
    expect(x.tenant_id).not.toBe(y.tenant_id);
    expect(x.project_id).not.toBe(y.project_id);
  });

  it("npm run -s cli -- tokens create --json prints one JSON object on stdout and nothing else (CONTRACT §1)", async () => {
    // Exactly the command of the contract, through npm: -s keeps npm's "> herald@… cli" banner off stdout.
    const r = await run("npm", ["run", "-s", "cli", "--", "tokens", "create", "--json"], {
      env: { ...env, npm_config_update_notifier: "false" },
    });
    expect(r.stdout).toMatch(/^\{.*\}\n$/);
    expect(parseCreated(r).token).toMatch(TOKEN);
    expect(r.stderr).toBe("");
  });

  it("npx herald tokens create --json prints one JSON object on stdout and nothing else (CONTRACT §1)", async () => {
    const r = await run("npx", ["--no-install", "herald", "tokens", "create", "--json"], {
      env: { ...env, npm_config_update_notifier: "false" },
    });
    expect(r.stdout).toMatch(/^\{.*\}\n$/);
    expect(parseCreated(r).token).toMatch(TOKEN);
  });

  it("honours --tenant, --project and --name (UUIDs in any case, stored lower-case)", async () => {
    const tenant = crypto.randomUUID();
    const project = crypto.randomUUID();
    const name = `ci-${crypto.randomUUID().slice(0, 8)}`;
    const issued = parseCreated(
      await herald(
        [
          "tokens",
          "create",
          "--tenant",
          tenant.toUpperCase(),
          "--project",
          project,
          "--name",
          name,
          "--json",
        ],
        env,
      ),
    );
    expect(issued).toMatchObject({ tenant_id: tenant, project_id: project });
    const sameTenant = parseCreated(await herald(["tokens", "create", "--tenant", tenant, "--json"], env));
    expect(sameTenant.tenant_id).toBe(tenant);
    expect(sameTenant.project_id).toMatch(UUID);
    expect(sameTenant.project_id).not.toBe(project);

    const listed = findListed(await listTokens(), issued.token);
    expect(listed).toMatchObject({ name, tenant_id: tenant, project_id: project, revoked_at: null });
  });

  it("without --json prints the token once, for a person to read", async () => {
    const r = await herald(["tokens", "create", "--name", "human"], env);
    expect(r.code, r.stderr).toBe(0);
    const tokens = r.stdout.match(/hrld_[A-Za-z0-9_-]{43}/g) ?? [];
    expect(tokens).toHaveLength(1);
    expect(r.stdout).toMatch(/tenant_id\s+[0-9a-f-]{36}/);
    expect(r.stdout).toMatch(/project_id\s+[0-9a-f-]{36}/);
  });

  it("a bad UUID exits non-zero with one readable line on stderr naming the option", async () => {
    const [tenant, project] = await Promise.all([
      herald(["tokens", "create", "--tenant", "not-a-uuid", "--json"], env),
      herald(["tokens", "create", "--project", "00000000-0000-4000-8000-00000000000g", "--json"], env),
    ]);
    expectOneLineFailure(tenant!, /--tenant must be a UUID/);
    expectOneLineFailure(project!, /--project must be a UUID/);
  });

  it("an unknown option or a missing value exits non-zero with one line", async () => {
    const [unknown, missing] = await Promise.all([
      herald(["tokens", "create", "--bogus", "--json"], env),
      herald(["tokens", "create", "--json", "--tenant"], env),
    ]);
    expectOneLineFailure(unknown!, /--bogus/);
    expectOneLineFailure(missing!, /--tenant/);
  });

  it("an unreachable database exits non-zero with one line, within the driver's deadline", async () => {
    // Within Herald's 3 s connection deadline, not a driver's default 30 s; the bound scales with this
    // machine's pace: twice what a call that fails before connecting takes, plus 10 s. Either store.
    const baseline = await herald(["tokens", "create", "--bogus", "--json"], env);
    expectOneLineFailure(baseline, /--bogus/);
    const [postgres, mongo] = await Promise.all([
      herald(["tokens", "create", "--json"], {
        ...env,
        DATABASE_URL: "postgres://postgres@127.0.0.1:9/herald",
      }),
      herald(["tokens", "create", "--json"], {
        ...env,
        DATABASE_URL: "",
        MONGODB_URI: "mongodb://127.0.0.1:9/",
      }),
    ]);
    for (const r of [postgres!, mongo!]) {
      expectOneLineFailure(r, /unreachable/);
      expect(r.ms).toBeLessThan(2 * baseline.ms + 10_000);
    }
  });

  it("DATABASE_URL and MONGODB_URI both set exits non-zero with one line naming both", async () => {
    const r = await herald(["tokens", "create", "--json"], { ...env, MONGODB_URI: "mongodb://127.0.0.1:9/" });
    expectOneLineFailure(r, /DATABASE_URL and MONGODB_URI are both set/);
  });
});

describe("herald tokens list", () => {
  it("--json shows each token's id, prefix and scope, never the token itself", async () => {
    const issued = parseCreated(await herald(["tokens", "create", "--name", "listed", "--json"], env));
    const [json, table] = await Promise.all([
      herald(["tokens", "list", "--json"], env),
      herald(["tokens", "list"], env),
    ]);
    expect(json!.code, json!.stderr).toBe(0);
    expect(lines(json!.stdout)).toHaveLength(1);
    for (const out of [json!.stdout, table!.stdout]) {
      expect(out).not.toContain(issued.token);
      // Not even a long stretch of it: only the short, shown prefix.
      expect(out).not.toContain(issued.token.slice(12, 24));
    }
    const { data } = JSON.parse(json!.stdout) as { data: ListedToken[] };
    const mine = data.filter((t) => issued.token.startsWith(t.prefix.replace(/…$/, "")));
    expect(mine).toHaveLength(1);
    const [record] = mine;
    expect(Object.keys(record!).sort()).toEqual(
      ["created_at", "id", "name", "prefix", "project_id", "revoked_at", "tenant_id"].sort(),
    );
    expect(record).toMatchObject({
      id: expect.stringMatching(UUID),
      name: "listed",
      tenant_id: issued.tenant_id,
      project_id: issued.project_id,
      revoked_at: null,
    });
    expect(record!.prefix).toMatch(/^hrld_.{1,12}…?$/);
    expect(record!.prefix.replace(/…$/, "").length).toBeLessThan(issued.token.length / 2);
    expect(table!.stdout).toContain(record!.id);
  });
});

describe("herald tokens revoke", () => {
  let server: HeraldProcess | undefined;

  beforeAll(async () => {
    server = await startHerald({ runtime: "node", env });
  });

  afterAll(async () => {
    expect(await server?.stop()).toBe(0);
  });

  const status = async (token: string) =>
    (await fetch(`${server!.baseUrl}/api/v1/webhooks`, { headers: { Authorization: `Bearer ${token}` } }))
      .status;

  it("makes the token answer 401 against a running server; other tokens keep working", async () => {
    const [a, b] = await Promise.all([
      herald(["tokens", "create", "--json"], env),
      herald(["tokens", "create", "--json"], env),
    ]);
    const revoked = parseCreated(a!);
    const kept = parseCreated(b!);
    expect(await status(revoked.token)).toBe(200);
    expect(await status(kept.token)).toBe(200);

    const record = findListed(await listTokens(), revoked.token);
    expect(record).toBeDefined();
    const r = await herald(["tokens", "revoke", record!.id], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain(record!.id);

    expect(await status(revoked.token)).toBe(401);
    expect(await status(kept.token)).toBe(200);
    const after = findListed(await listTokens(), revoked.token);
    expect(after!.revoked_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    // Revoking again, an unknown id, or no id at all: one line, non-zero.
    const [again, unknown, none] = await Promise.all([
      herald(["tokens", "revoke", record!.id], env),
      herald(["tokens", "revoke", crypto.randomUUID()], env),
      herald(["tokens", "revoke"], env),
    ]);
    expectOneLineFailure(again!, /no active token/);
    expectOneLineFailure(unknown!, /no active token/);
    expectOneLineFailure(none!, /needs the token id/);
    expect(await status(revoked.token)).toBe(401);
  });
});

describe("herald --help", () => {
  it("herald --help and herald tokens --help print usage on stdout and exit 0", async () => {
    const [top, tokens, sub] = await Promise.all([
      herald(["--help"], env),
      herald(["tokens", "--help"], env),
      herald(["tokens", "create", "--help"], env),
    ]);
    for (const r of [top!, tokens!, sub!]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toBe("");
    }
    expect(top!.stdout).toMatch(/^Usage: npx herald <command>/);
    expect(top!.stdout).toContain("tokens");
    for (const r of [tokens!, sub!]) {
      expect(r.stdout).toMatch(/^Usage: npx herald tokens/);
      for (const word of ["create", "list", "revoke", "--tenant", "--project", "--name", "--json"]) {
        expect(r.stdout).toContain(word);
      }
    }
  });

  it("an unknown command exits non-zero with one line pointing at --help", async () => {
    const [top, sub] = await Promise.all([
      herald(["frobnicate"], env),
      herald(["tokens", "frobnicate"], env),
    ]);
    expectOneLineFailure(top!, /unknown command "frobnicate".*--help/);
    expectOneLineFailure(sub!, /unknown command "tokens frobnicate".*--help/);
  });
});

describe("bin/herald.mjs (the package's bin) under node", () => {
  it("works from any directory: --help, and tokens create --json against the same database", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "herald-bin-"));
    try {
      const [help, created] = await Promise.all([
        heraldBin(["--help"], env, elsewhere),
        heraldBin(["tokens", "create", "--json"], env, elsewhere),
      ]);
      expect(help!.code, help!.stderr).toBe(0);
      expect(help!.stdout).toMatch(/^Usage: npx herald <command>/);
      const issued = parseCreated(created!);
      expect(created!.stderr).toBe("");
      expect(issued.token).toMatch(TOKEN);
      expect(findListed(await listTokens(), issued.token)).toMatchObject({
        tenant_id: issued.tenant_id,
        project_id: issued.project_id,
      });
      const bad = await heraldBin(["tokens", "create", "--tenant", "x"], env, elsewhere);
      expectOneLineFailure(bad, /--tenant must be a UUID/);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
