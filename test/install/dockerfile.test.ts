import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { run } from "../support/herald-cli.ts";

// The image, as far as it can be checked without a container engine: each runtime's stage starts from
// that runtime's official image, runs as a user that is not root and starts Herald's entry point on the
// runtime itself (no tsx); the dependencies are what `npm ci --omit=dev` installs, less the carried Node
// (the base image brings its runtime); the health check's command works; and the files Herald imports
// are in what the image copies.

const ROOT = resolve(import.meta.dirname, "../..");
const text = readFileSync(join(ROOT, "Dockerfile"), "utf8").replace(/\\\n\s*/g, "");
const scratch = mkdtempSync(join(tmpdir(), "herald-dockerfile-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Stage {
  from: string;
  name: string;
  lines: string[];
}
const stages: Stage[] = [];
for (const line of text.split("\n").map((l) => l.trim())) {
  if (!line || line.startsWith("#")) continue;
  const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
  if (from) stages.push({ from: from[1]!, name: from[2] ?? "", lines: [] });
  else stages.at(-1)?.lines.push(line);
}
const stage = (name: string) => {
  const found = stages.find((s) => s.name === name);
  if (!found) throw new Error(`no stage ${name} in the Dockerfile`);
  return found;
};
const instruction = (s: Stage, word: string) => s.lines.filter((l) => l.startsWith(`${word} `));
const args = Object.fromEntries(
  [...text.matchAll(/^ARG (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!] as const),
);
const lock = (dir: string) =>
  JSON.parse(readFileSync(join(ROOT, dir, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version: string }>;
  };

const RUNTIMES = {
  node: { image: "node:", user: "node", main: "src/main/main.node.ts", bin: "node" },
  bun: { image: "oven/bun:", user: "bun", main: "src/main/main.bun.ts", bin: "bun" },
  deno: { image: "denoland/deno:", user: "deno", main: "src/main/main.deno.ts", bin: "deno" },
} as const;

describe("the Dockerfile's runtime stages", () => {
  it("the image is the runtime the build argument names (node by default)", () => {
    expect(args.RUNTIME).toBe("node");
    expect(stages.at(-1)?.from).toBe(`runtime-\${RUNTIME}`);
  });

  it.each(Object.entries(RUNTIMES))(
    "%s: its official image, a user that is not root, the entry point on the runtime itself",
    (name, r) => {
      const s = stage(`runtime-${name}`);
      expect(s.from.startsWith(r.image), s.from).toBe(true);
      const users = instruction(s, "USER");
      expect(users).toEqual([`USER ${r.user}`]);
      const cmd = JSON.parse(instruction(s, "CMD")[0]!.slice(4)) as string[];
      expect(cmd[0]).toBe(r.bin);
      expect(cmd.at(-1)).toBe(r.main);
      expect(existsSync(join(ROOT, r.main))).toBe(true);
      expect(s.lines.join("\n")).not.toMatch(/tsx/);
      // The data directory belongs to that user; the code stays root's (the process cannot change it).
      expect(s.lines).toContain(`RUN mkdir -p /var/lib/herald && chown ${r.user}:${r.user} /var/lib/herald`);
      expect(instruction(s, "COPY")).toEqual(["COPY --from=app /app /app"]);
    },
  );

  it("pins Bun and Deno at the versions the tests run (runtimes/bun-deno)", () => {
    const locked = lock("runtimes/bun-deno").packages;
    expect(args.BUN_VERSION).toBe(locked["node_modules/bun"]?.version);
    expect(args.DENO_VERSION).toBe(locked["node_modules/deno"]?.version);
  });

  it("nothing in the image is built or installed with dev dependencies", () => {
    const instructions = stages.flatMap((s) => s.lines).join("\n");
    expect(instructions).not.toMatch(/tsx|tsc|npm (ci|install)(?![^\n]*--omit=dev)/);
  });
});

describe("the image's dependencies", () => {
  /** "name version" of every package `npm ci <flags>` would install from the lockfile, without the network. */
  function wouldInstall(flags: string[]): string[] {
    const dir = join(scratch, flags.join("_").replace(/\W/g, ""));
    for (const file of ["package.json", "package-lock.json"]) cpSync(join(ROOT, file), join(dir, file));
    const r = spawnSync(
      "npm",
      ["ci", ...flags, "--dry-run", "--offline", "--ignore-scripts", "--loglevel=error"],
      {
        cwd: dir,
        encoding: "utf8",
        env: { ...process.env, npm_config_cache: join(scratch, "cache") },
        timeout: 120_000,
      },
    );
    expect(r.status, r.stderr).toBe(0);
    return r.stdout
      .split("\n")
      .filter((l) => l.startsWith("add "))
      .map((l) => l.slice(4))
      .sort();
  }

  it("are `npm ci --omit=dev`'s, less the carried Node, and no dev dependency", () => {
    const deps = stage("deps");
    const ci = instruction(deps, "RUN").map((l) => /^RUN npm (ci .*)$/.exec(l)?.[1]);
    expect(ci).toHaveLength(1);
    const flags = ci[0]!.split(/\s+/).slice(1);
    expect(flags).toContain("--omit=dev");
    const image = wouldInstall(flags);
    const production = wouldInstall(["--omit=dev"]);
    const carried = production.filter((p) => /^node-(bin-)?(linux|darwin|win)-/.test(p));
    expect(carried).toHaveLength(1);
    expect(image).toEqual(production.filter((p) => !carried.includes(p)));
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const names = new Set(image.map((p) => p.split(" ")[0]));
    for (const dep of Object.keys(manifest.dependencies)) expect(names.has(dep), dep).toBe(true);
    for (const dep of Object.keys(manifest.devDependencies)) expect(names.has(dep), dep).toBe(false);
  });

  it("the image holds every file Herald's sources import (src, clients/typescript)", () => {
    const copied = stage("app")
      .lines.filter((l) => l.startsWith("COPY ") && !l.includes("--from"))
      .map((l) => l.split(/\s+/)[1]!);
    expect(copied).toEqual(expect.arrayContaining(["src", "bin", "clients/typescript", "package.json"]));
    const files = spawnSync("git", ["ls-files", "src", "bin"], { cwd: ROOT, encoding: "utf8" })
      .stdout.split("\n")
      .filter((f) => /\.(ts|mjs)$/.test(f));
    expect(files.length).toBeGreaterThan(50);
    const outside: string[] = [];
    for (const file of files) {
      const source = readFileSync(join(ROOT, file), "utf8");
      for (const m of source.matchAll(/(?:from|import\()\s*"(\.{1,2}\/[^"]+)"/g)) {
        const target = relative(ROOT, resolve(ROOT, dirname(file), m[1]!));
        if (!copied.some((c) => target === c || target.startsWith(`${c}/`))) outside.push(`${file}: ${m[1]}`);
      }
    }
    expect(outside).toEqual([]);
  });
});

describe("the health check", () => {
  let server: Server;
  let status = 200;
  afterAll(() => server?.close());

  it("node's command exits 0 while /healthz answers 200 and 1 otherwise", async () => {
    server = createServer((req, res) => {
      res.statusCode = req.url === "/healthz" ? status : 404;
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const health = instruction(stage("runtime-node"), "HEALTHCHECK")[0]!;
    const cmd = JSON.parse(health.slice(health.indexOf("CMD ") + 4)) as string[];
    expect(health).toMatch(/--interval=\d+s --timeout=\d+s --start-period=\d+s --retries=\d+/);
    const check = () =>
      run(process.execPath, cmd.slice(1), { env: { PORT: String(port) }, timeoutMs: 30_000 });
    expect((await check()).code).toBe(0);
    status = 503;
    expect((await check()).code).toBe(1);
    server.close();
    expect((await check()).code).toBe(1);
    expect(cmd[0]).toBe("node");
    for (const name of ["bun", "deno"] as const) {
      const other = instruction(stage(`runtime-${name}`), "HEALTHCHECK")[0]!;
      expect(other).toContain("/healthz");
      expect(JSON.parse(other.slice(other.indexOf("CMD ") + 4))[0]).toBe(name);
    }
  });
});
