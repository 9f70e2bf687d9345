import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";

// ADR 23: Herald runs on the Node lines CI tests, carried as npm packages (node-<platform>, one per
// platform, optional so npm installs only the one that fits): Node 26 at the root, whose `node` the npm
// scripts run, and Node 22, the oldest maintained line, in runtimes/node22 (a package of its own that
// `npm run test:all` and CI install, ADR 26). The root has no `engines`: npx checks it against the
// machine's Node, which only runs npm (`devEngines`), and warned on every `npx herald`; the README and
// ADR 23 name the two lines. A clean install on the machine's Node must not meet a package that refuses it.

const ROOT = resolve(import.meta.dirname, "../..");
interface Manifest {
  engines?: { node?: string };
  description?: string;
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
  it("are 26 (the root, every platform package at one version) and 22 (runtimes/node22); the root claims no engines", () => {
    expect(semver.major(V26)).toBe(26);
    expect(semver.major(V22)).toBe(22);
    expect(Object.keys(root.optionalDependencies ?? {}).sort()).toEqual(
      Object.keys(node22.optionalDependencies ?? {}).sort(),
    );
    expect(root.engines).toBeUndefined();
    expect(
      readFileSync(join(ROOT, "docs/adr/0023-supported-node.md"), "utf8").replace(/\s+/g, " "),
    ).toContain(`${V22} and ${V26}`);
  });

  it("Node 26 is installed by npm install: node_modules/.bin/node", () => {
    const version = (bin: string) =>
      execFileSync(join(ROOT, bin), ["--version"], { encoding: "utf8" }).trim();
    expect(version("node_modules/.bin/node")).toBe(`v${V26}`);
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

  it("the runtimes' packages (runtimes/node22, runtimes/bun-deno) refuse neither the machine's Node nor a carried line", () => {
    const range = root.devEngines?.runtime?.version ?? "";
    const oldest = semver.minVersion(range)!.version;
    for (const dir of ["runtimes/node22", "runtimes/bun-deno"]) {
      expect(refusing(json<Lock>(`${dir}/package-lock.json`), [oldest, V22, V26])).toEqual([]);
    }
  });
});
