import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { run } from "../support/herald-cli.ts";
import { freePort } from "../support/herald-process.ts";
import { type ReadmeCommand, readmeCommands, withoutComment } from "./readme-commands.ts";
import { type Ran, Shell } from "./shell.ts";

// Every command of the README's ```sh blocks, run exactly as written, top to bottom, in one bash
// session (a terminal), against real Herald processes on loopback. The rules, kept minimal:
//
// - The session starts in the repository with no database configured, as on a fresh machine (neither
//   DATABASE_URL nor MONGODB_URI: `npm start` runs on the embedded PostgreSQL in HERALD_DATA_DIR, until a
//   command the README shows configures another), HOST=127.0.0.1, PORT and HERALD_URL on a free port,
//   HERALD_LISTEN_PORT on another, HERALD_DATA_DIR and TMPDIR in a temporary directory,
//   FERRETDB_BACKEND=sqlite (CI tests the PostgreSQL path of scripts/ferretdb.sh), and NODE_OPTIONS preloading no-egress.mjs, which makes every
//   host name but localhost fail to resolve: nothing is sent off the machine (a delivery to
//   hooks.example.com fails with ENOTFOUND, like an unreachable receiver).
// - `localhost:8080` in a command becomes `localhost:$PORT` (8080 may be taken on a shared machine).
// - A command that holds its terminal (`npm start`, `npx herald listen`) runs as a background job; the
//   harness waits until Herald answers /readyz, or until listen prints its secret. A new `npm start`
//   first gives each running listen Ctrl-C (SIGINT to its process group: it must delete its endpoint),
//   then stops the running Herald with SIGTERM to the npm process, which must end it with exit 0. At
//   the end, listen gets Ctrl-C likewise; Herald gets SIGTERM; and `scripts/ferretdb.sh stop` and `scripts/postgres.sh stop` (shown in the README's prose)
//   stop the servers that `eval "$(scripts/... start)"` started.
// - Placeholders are filled from what earlier commands printed or created:
//     hrld_..., <tenant_id>, <project_id>  token, tenant_id, project_id of the last `tokens create --json`
//     <webhook_id>, <webhook-id>, <id>      the newest endpoint the command's token sees ($TOKEN in the
//                                           curl tour, else $HERALD_TOKEN)
//     <delivery_id>, <delivery-id>          that endpoint's newest delivery that is no longer pending
//   Any other <placeholder> outside a comment fails the test.
// - A command passes when it exits 0 and, if it printed JSON, that is not an error document (curl -s
//   exits 0 on a 4xx). While listen runs, an event published with `events send` by its project (the same
//   HERALD_TOKEN) must show up in its output, verified; at least one must.
// - Commands this test does not run are listed in NOT_RUN_HERE with where they are run instead; an entry
//   the README no longer has fails the test, and so does a README command that was neither run nor listed.

const ROOT = resolve(import.meta.dirname, "../..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** Commands run elsewhere, and where. Matched against the command without its trailing comment. */
const NOT_RUN_HERE: Record<string, string> = {
  "npm test": "the suite cannot run itself inside itself; .ci/run runs it",
  "npm run test:all": "the suite cannot run itself inside itself; .ci/run runs it",
  "npm run typecheck": ".ci/run runs it",
  "npm run lint": ".ci/run runs it",
  "npm run openapi":
    "it rewrites committed files while other tests read them; test/adapters/http/openapi.test.ts checks they equal what it generates",
  "npm run bench":
    "minutes of load on a shared machine; bench/ is run by hand and its figures are in docs/performance.md",
};

const scratch = mkdtempSync(join(tmpdir(), "herald-readme-"));
// TMPDIR of the session: as root, scripts/postgres.sh runs PostgreSQL as its own user, who must reach it.
chmodSync(scratch, 0o755);
const STARTERS = ["ferretdb", "postgres"] as const;

const isServer = (c: string) => /(^|\s)npm (start|run start:\w+)$/.test(c);
const isListen = (c: string) => /(^|\s)npx herald listen(\s|$)/.test(c);

interface Job {
  pid: number;
  command: string;
  log: string;
  /** A listen's HERALD_TOKEN: the project whose published events it must print. */
  token?: string;
}

const session = {
  shell: null as Shell | null,
  server: null as Job | null,
  listens: [] as Job[],
  /** Servers started by `eval "$(scripts/<name>.sh start)"`, stopped at the end. */
  started: new Set<(typeof STARTERS)[number]>(),
};

afterAll(async () => {
  session.shell?.close();
  for (const job of [...session.listens, session.server]) {
    if (!job) continue;
    try {
      process.kill(-job.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  // A run that failed half-way may have left a server of scripts/ferretdb.sh or postgres.sh running.
  for (const name of STARTERS) {
    const state = join(scratch, `herald-${name}-${process.getuid?.() ?? 0}`);
    if (existsSync(state))
      await run(join(ROOT, `scripts/${name}.sh`), ["stop", state], { timeoutMs: 30_000 });
  }
  rmSync(scratch, { recursive: true, force: true });
});

function logOf(job: Job): string {
  try {
    return readFileSync(job.log, "utf8");
  } catch {
    return "";
  }
}

async function until<T>(what: string, probe: () => Promise<T | null>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("README", () => {
  it("every command it shows runs as written, against a real Herald on loopback", async () => {
    const commands = readmeCommands(README);
    expect(commands.length).toBeGreaterThan(20);
    const stale = Object.keys(NOT_RUN_HERE).filter(
      (k) => !commands.some((c) => withoutComment(c.text) === k),
    );
    expect(stale, "NOT_RUN_HERE lists commands the README no longer shows").toEqual([]);

    const port = await freePort();
    const listenPort = await freePort();
    const baseUrl = `http://localhost:${port}`;
    const shell = new Shell(ROOT, {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      LANG: "C.UTF-8",
      HOST: "127.0.0.1",
      PORT: String(port),
      HERALD_URL: baseUrl,
      HERALD_LISTEN_PORT: String(listenPort),
      HERALD_DATA_DIR: join(scratch, "data"),
      TMPDIR: scratch,
      FERRETDB_BACKEND: "sqlite",
      NODE_OPTIONS: `--import ${join(import.meta.dirname, "no-egress.mjs")}`,
      npm_config_update_notifier: "false",
    });
    session.shell = shell;

    let lastJson: Record<string, unknown> = {};
    // Events a running listen printed verified: the first screen's promise.
    let verifiedByListen = 0;
    const ran: string[] = [];
    const notRun: string[] = [];

    // The token a command uses: the tour's $TOKEN (its curl headers), else $HERALD_TOKEN (the CLI's).
    let current = "";
    const token = async () =>
      (/\$TOKEN|\$\{H\[@\]\}/.test(current) && (await shell.variable("TOKEN"))) ||
      (await shell.variable("HERALD_TOKEN")) ||
      (await shell.variable("TOKEN"));
    const api = async (path: string) => {
      const res = await fetch(`${baseUrl}/api/v1${path}`, {
        headers: { Authorization: `Bearer ${await token()}` },
      });
      expect(res.status, `GET ${path}`).toBe(200);
      return (await res.json()) as { data: { id: string; status?: string }[] };
    };
    const newestWebhook = async () => {
      const { data } = await api("/webhooks?limit=1");
      expect(data, "a placeholder needs an endpoint created by an earlier command").toHaveLength(1);
      return data[0]!.id;
    };
    const fill: Record<string, () => Promise<string>> = {
      "hrld_...": async () => String(lastJson.token ?? ""),
      "<tenant_id>": async () => String(lastJson.tenant_id ?? ""),
      "<project_id>": async () => String(lastJson.project_id ?? ""),
      "<webhook_id>": newestWebhook,
      "<webhook-id>": newestWebhook,
      "<id>": newestWebhook,
      "<delivery_id>": async () => {
        const webhook = await newestWebhook();
        return until(
          "a delivery that is no longer pending",
          async () =>
            (await api(`/webhooks/${webhook}/deliveries`)).data.find((d) => d.status !== "pending")?.id ??
            null,
          60_000,
        );
      },
    };
    fill["<delivery-id>"] = fill["<delivery_id>"]!;

    const startServer = async (command: string, c: ReadmeCommand) => {
      // A listen belongs to the server it was started against: Ctrl-C before that server is replaced.
      if (session.server) await stopListens();
      if (session.server) await stopServer();
      const job = { pid: 0, command, log: join(scratch, `server-${c.line}.log`) };
      job.pid = await shell.background(command, job.log);
      session.server = job;
      await until(
        `Herald started by "${command}" answers /readyz`,
        async () => {
          const r = await fetch(`${baseUrl}/readyz`).catch(() => null);
          if (r?.ok) return true;
          try {
            process.kill(job.pid, 0);
          } catch {
            throw new Error(`"${command}" exited:\n${logOf(job)}`);
          }
          return null;
        },
        120_000,
      );
    };
    const stopServer = async () => {
      const job = session.server!;
      session.server = null;
      process.kill(job.pid, "SIGTERM"); // to npm itself, as a supervisor would
      expect(await shell.wait(job.pid, 60_000), `SIGTERM to "${job.command}":\n${logOf(job)}`).toBe(0);
      expect(logOf(job)).toMatch(/"msg":"stopped"/);
      expect(logOf(job)).not.toMatch(/EBADENGINE/);
      await until(
        "the port is free once npm start has exited",
        async () => ((await fetch(`${baseUrl}/healthz`).catch(() => null)) === null ? true : null),
        10_000,
      );
    };
    const startListen = async (command: string, c: ReadmeCommand) => {
      const job: Job = {
        pid: 0,
        command,
        log: join(scratch, `listen-${c.line}.log`),
        token: await shell.variable("HERALD_TOKEN"),
      };
      job.pid = await shell.background(command, job.log);
      session.listens.push(job);
      await until(
        `"${command}" prints its endpoint's secret`,
        async () => {
          if (/^Signing secret .*whsec_/m.test(logOf(job))) return true;
          if (/^herald: /m.test(logOf(job))) throw new Error(`"${command}" failed:\n${logOf(job)}`);
          return null;
        },
        60_000,
      );
      // A listen session: Herald delivers over listen's own connection, to no address (ADR 29).
      expect(logOf(job)).toMatch(/^Created endpoint [0-9a-f-]{36} → listen:\/\/[0-9a-f-]{36} /m);
    };
    const stopListens = async () => {
      for (const job of session.listens.splice(0)) {
        process.kill(-job.pid, "SIGINT"); // Ctrl-C in its terminal
        const code = await shell.wait(job.pid, 30_000);
        expect(logOf(job)).toMatch(/^Deleted endpoint [0-9a-f-]{36}\.\nStopped\.$/m);
        expect(logOf(job)).not.toMatch(/EBADENGINE/);
        // npx (npm) itself ends with 128 + SIGINT after a Ctrl-C, whatever its child returned, as most
        // programs do in a terminal; what listen did is checked in its output above.
        expect([0, 130], logOf(job)).toContain(code);
      }
    };

    for (const c of commands) {
      const bare = withoutComment(c.text);
      if (NOT_RUN_HERE[bare]) {
        notRun.push(c.text);
        continue;
      }
      let command = c.text.replaceAll("localhost:8080", `localhost:${port}`);
      current = command;
      for (const placeholder of new Set(withoutComment(command).match(/<[a-z_-]+>|hrld_\.\.\./g) ?? [])) {
        const value = fill[placeholder];
        expect(value, `README line ${c.line}: no rule fills ${placeholder}`).toBeDefined();
        const filled = await value!();
        expect(filled, `README line ${c.line}: nothing to fill ${placeholder} with`).not.toBe("");
        command = command.replaceAll(placeholder, filled);
      }
      const where = `README line ${c.line} (${c.section}): ${c.text}`;
      if (isServer(withoutComment(command))) {
        await startServer(withoutComment(command), c);
      } else if (isListen(withoutComment(command))) {
        await startListen(withoutComment(command), c);
      } else {
        const r: Ran = await shell.run(command, 180_000);
        expect(r.code, `${where}\n${r.stdout}\n${r.stderr}`).toBe(0);
        // npx checks engines against the machine's Node, which only runs npm (ADR 26): no warning.
        expect(r.stderr, where).not.toMatch(/EBADENGINE/);
        const json = parseJson(r.stdout);
        if (json) {
          expect(
            typeof json.status === "number" && json.status >= 400 && typeof json.code === "string",
            `${where} answered an error:\n${r.stdout}`,
          ).toBe(false);
          lastJson = json;
        }
        for (const name of STARTERS)
          if (new RegExp(`(^|\\s)eval "\\$\\(scripts/${name}\\.sh start[^)]*\\)"`).test(command))
            session.started.add(name);
        const published = /^Published \S+ (evt_\w+) /m.exec(r.stdout)?.[1];
        const publisher = await shell.variable("HERALD_TOKEN");
        for (const job of published ? session.listens.filter((l) => l.token === publisher) : []) {
          const line = await until(
            `listen prints event ${published}`,
            async () =>
              logOf(job)
                .split("\n")
                .find((l) => l.includes(published!)) ?? null,
            60_000,
          );
          expect(line).toMatch(/✔ verified +message\.\w+ +evt_/);
          verifiedByListen++;
        }
      }
      ran.push(c.text);
    }

    // Nothing left the machine: no delivery to an endpoint outside it got an answer.
    let outward = 0;
    for (const t of new Set([await shell.variable("TOKEN"), await shell.variable("HERALD_TOKEN")])) {
      if (!t) continue;
      const get = async (path: string) =>
        (await (
          await fetch(`${baseUrl}/api/v1${path}`, { headers: { Authorization: `Bearer ${t}` } })
        ).json()) as { data: { id: string; url: string; status: string; response_status: number | null }[] };
      const outside = (url: string) => !url.includes("127.0.0.1") && !url.startsWith("listen://");
      for (const w of (await get("/webhooks?limit=100")).data.filter((w) => outside(w.url))) {
        for (const d of (await get(`/webhooks/${w.id}/deliveries?limit=100`)).data) {
          outward++;
          expect(d.status, `a delivery to ${w.url}`).not.toBe("succeeded");
          expect(d.response_status, `a delivery to ${w.url} got an answer`).toBeNull();
        }
      }
    }
    expect(outward).toBeGreaterThan(0);
    expect(verifiedByListen, "the README's listen printed a published event, verified").toBeGreaterThan(0);

    await stopListens();
    if (session.server) await stopServer();
    for (const name of session.started) {
      const r = await shell.run(`scripts/${name}.sh stop`, 60_000);
      expect(r.code, r.stderr).toBe(0);
      expect((await shell.run(`scripts/${name}.sh status`, 10_000)).stdout).toMatch(/^not running/);
    }
    shell.close();

    expect([...ran, ...notRun].sort()).toEqual(commands.map((c) => c.text).sort());
    expect(ran.length).toBe(commands.length - notRun.length);
  }, 900_000);
});

function parseJson(text: string): Record<string, unknown> | null {
  const t = text.trim();
  if (!t.startsWith("{")) return null;
  try {
    const v = JSON.parse(t) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
