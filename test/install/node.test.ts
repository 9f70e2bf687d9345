import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";

// ADR 23: Herald runs on the Node lines CI tests, carried as npm packages (node-<platform>, one per
// platform, optional so npm installs only the one that fits): Node 26 at the root, whose `node` the npm
// scripts run, and Node 22, the oldest maintained line, in the runtimes/node22 workspace for CI's
// runtime matrix. `engines` names exactly those two; the Node that runs npm only has to run npm
// (`devEngines`), so a clean install on it must not meet a package that refuses it.

const ROOT = resolve(import.meta.dirname, "../..");
interface Manifest {
  engines?: { node?: string };
  devEngines?: { runtime?: { name: string; version: string } };
  optionalDependencies?: Record<string, string>;
}
interface Lock {
  packages: Record<string, { version?: string; optional?: boolean; engines?: { node?: string } }>;
}
const json = <T>(path: string) => JSON.parse(readFileSync(join(ROOT, path), "utf8")) as T;
const root = json<Manifest>("package.json");
const node22 = json<Manifest>("runtimes/node22/package.json");

/** The one version every platform package of a line is pinned to. */
function lineVersion(manifest: Manifest): string {
  const versions = new Set(Object.values(manifest.optionalDependencies ?? {}));
  expect([...versions]).toHaveLength(1);
  return [...versions][0]!;
}
const V26 = lineVersion(root);
const V22 = lineVersion(node22);

/** The lockfile's packages whose `engines.node` refuses one of `versions`, as "name@version: range". */
function refusing(lock: Lock, versions: string[]): string[] {
  const out: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    const range = entry.engines?.node;
    if (!path || !range) continue;
    for (const v of versions) {
      if (!semver.satisfies(v, range)) out.push(`${path}@${entry.version} needs ${range}, not ${v}`);
    }
  }
  return out;
}

describe("the Node lines Herald carries", () => {
  it("are 26 (the root, every platform package at one version) and 22 (runtimes/node22), and engines names exactly them", () => {
    expect(semver.major(V26)).toBe(26);
    expect(semver.major(V22)).toBe(22);
    expect(Object.keys(root.optionalDependencies ?? {}).sort()).toEqual(
      Object.keys(node22.optionalDependencies ?? {}).sort(),
    );
    expect(root.engines?.node).toBe(`^${V22} || ^${V26}`);
  });

  it("are installed: node_modules/.bin/node is Node 26, runtimes/node22's is Node 22", () => {
    const version = (bin: string) =>
      execFileSync(join(ROOT, bin), ["--version"], { encoding: "utf8" }).trim();
    expect(version("node_modules/.bin/node")).toBe(`v${V26}`);
    expect(version("runtimes/node22/node_modules/.bin/node")).toBe(`v${V22}`);
  });

  it("the Dockerfile's default base image is the root's line", () => {
    const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
    expect(dockerfile).toMatch(new RegExp(`^ARG NODE_VERSION=${semver.major(V26)}$`, "m"));
  });
});

describe("a clean install prints no engine warning", () => {
  it("no package of the root's tree refuses a Node that devEngines lets run npm, nor a carried line", () => {
    const range = root.devEngines?.runtime?.version ?? "";
    expect(root.devEngines?.runtime?.name).toBe("node");
    const oldest = semver.minVersion(range)!.version;
    expect(refusing(json<Lock>("package-lock.json"), [oldest, V22, V26])).toEqual([]);
  });

  it("assets/api-reference, installed by the root's postinstall on the carried Node, accepts both lines", () => {
    const lock = json<Lock>("assets/api-reference/package-lock.json");
    expect(refusing(lock, [V22, V26])).toEqual([]);
    // Why it is installed apart: Scalar's packages refuse the machine's older Node, which runs npm.
    expect(refusing(lock, ["20.19.0"])).toContainEqual(
      expect.stringMatching(/^node_modules\/@scalar\/api-reference@1\.\d+\.\d+ needs >=22/),
    );
  });
});
