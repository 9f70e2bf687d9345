// Installs the runtimes only `npm run test:all`, CI and `npm run start:bun`/`start:deno` need, each a small
// package of its own under runtimes/ with its own lockfile (no registry host in it): runtimes/node22 (CI's
// second Node line, ADR 23) and runtimes/bun-deno (Bun and Deno). `npm install` at the root installs
// neither (ADR 26). Usage: node scripts/install-runtimes.mjs [node22] [bun-deno] (no argument: both).
// A package whose node_modules already holds exactly what its lockfile names (npm's own record,
// node_modules/.package-lock.json) is left alone, so a second run is instant and works offline.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const RUNTIMES = ["node22", "bun-deno"];
const root = fileURLToPath(new URL("../", import.meta.url));

/** Whether runtimes/<name>/node_modules holds every package of its lockfile at its version and integrity. */
export function upToDate(name) {
  const dir = join(root, "runtimes", name);
  const read = (file) => JSON.parse(readFileSync(join(dir, file), "utf8")).packages ?? {};
  try {
    const locked = read("package-lock.json");
    const installed = read("node_modules/.package-lock.json");
    // Optional platform packages npm skipped on this machine are in the lockfile but not installed.
    const same = ([k, v]) => locked[k]?.version === v.version && locked[k]?.integrity === v.integrity;
    const required = Object.entries(locked).filter(([k, v]) => k !== "" && !v.optional);
    return Object.entries(installed).every(same) && required.every(([k]) => installed[k]);
  } catch {
    return false;
  }
}

/** Runs `npm ci` in runtimes/<name> unless it is up to date; returns npm's exit status. */
export function installRuntime(name) {
  if (upToDate(name)) return 0;
  const dir = join(root, "runtimes", name);
  const env = { ...process.env };
  // The settings npm hands its scripts that describe the root project, not this package.
  for (const key of Object.keys(env)) {
    if (/^npm_config_(workspaces?|include_workspace_root|global|prefix|location|omit|include)$/i.test(key))
      delete env[key];
  }
  console.log(`installing runtimes/${name} (npm ci there)`);
  const npm = process.env.npm_execpath;
  const [cmd, args] = npm ? [process.execPath, [npm]] : ["npm", []];
  const r = spawnSync(cmd, [...args, "ci", "--no-audit", "--no-fund", "--loglevel=warn"], {
    cwd: dir,
    env,
    stdio: "inherit",
    shell: !npm && process.platform === "win32",
  });
  return r.status ?? 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : RUNTIMES;
  for (const name of names) {
    if (!RUNTIMES.includes(name) || !existsSync(join(root, "runtimes", name, "package.json"))) {
      console.error(`install-runtimes: no runtimes/${name} (one of ${RUNTIMES.join(", ")})`);
      process.exit(2);
    }
    const status = installRuntime(name);
    if (status !== 0) process.exit(status);
  }
}
