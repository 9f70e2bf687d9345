import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { run } from "../support/herald-cli.ts";

// `npm ci` must work on every platform a contributor may use: the lockfile has to list every optional
// platform package (biome, deno, bun, esbuild) with its integrity hash, and must name no registry host
// (the team's npm config omits `resolved`). A lockfile written on one machine with a registry that
// lacks some platforms' builds once listed 2 of biome's 10 and 1 of deno's 6, and `npm ci` refused it.

const ROOT = resolve(import.meta.dirname, "../..");
const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
  packages: Record<
    string,
    { version?: string; integrity?: string; optionalDependencies?: Record<string, string> }
  >;
};
const scratch = mkdtempSync(join(tmpdir(), "herald-lockfile-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Where npm would look for `dep` required by the package at `path` (nested first, then hoisted). */
function entryFor(path: string, dep: string) {
  for (let at = path; ; ) {
    const key = at ? `${at}/node_modules/${dep}` : `node_modules/${dep}`;
    if (lock.packages[key]) return lock.packages[key];
    if (!at) return undefined;
    const cut = at.lastIndexOf("/node_modules/");
    at = cut === -1 ? "" : at.slice(0, cut);
  }
}

describe("package-lock.json", () => {
  it("lists every optional platform package of every dependency, at its version, with an integrity hash", () => {
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
        const found = entryFor(path, dep);
        if (!found) missing.push(`${dep}@${version} (for ${path || "the root"})`);
        else if (!found.integrity) missing.push(`${dep}: no integrity`);
      }
    }
    expect(missing).toEqual([]);
    // The platform binaries CI, macOS, Windows and arm64 contributors need are really there.
    for (const name of [
      "@biomejs/cli-darwin-arm64",
      "@biomejs/cli-win32-x64",
      "@biomejs/cli-linux-arm64-musl",
      "@deno/darwin-arm64",
      "@deno/win32-x64",
      "@deno/linux-arm64-glibc",
      "@oven/bun-darwin-aarch64",
      "@esbuild/win32-x64",
    ]) {
      expect(lock.packages[`node_modules/${name}`]?.integrity, name).toMatch(/^sha512-/);
    }
  });

  it("names no registry host (no resolved URLs)", () => {
    const text = readFileSync(join(ROOT, "package-lock.json"), "utf8");
    expect(text).not.toMatch(/"resolved"/);
    expect(text).not.toMatch(/registry|npmjs|yarnpkg/i);
  });

  it("satisfies `npm ci --dry-run --offline` (npm's own completeness check, without the network)", async () => {
    cpSync(join(ROOT, "package.json"), join(scratch, "package.json"));
    cpSync(join(ROOT, "package-lock.json"), join(scratch, "package-lock.json"));
    const result = await run(
      "npm",
      ["ci", "--dry-run", "--offline", "--ignore-scripts", "--loglevel=error"],
      {
        cwd: scratch,
        env: { npm_config_cache: join(scratch, "cache") },
        timeoutMs: 120_000,
      },
    );
    expect(result.stderr + result.stdout).not.toMatch(/Missing: /);
    expect(result.code, result.stderr).toBe(0);
  });
});
