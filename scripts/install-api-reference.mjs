// The root package's postinstall (npm install, npm ci): installs assets/api-reference, the package that
// carries Scalar's browser bundle for /docs, from its own lockfile with `npm ci`, run by the Node that
// runs Herald. npm puts node_modules/.bin first on a lifecycle script's PATH, so `node` here is the
// carried Node (the root's node-<platform> packages, ADR 23), not the one npm was started with: the
// @scalar packages need Node >= 22, and npm checks their `engines` against the Node running it. Where no
// carried Node exists for the platform (or optional packages were omitted), this runs on the machine's
// Node and npm says so itself if that Node is too old. When node_modules already holds exactly what the
// lockfile names (npm's own record of it, node_modules/.package-lock.json), there is nothing to do: `npm ci`
// would delete and reinstall all of it on every `npm install`.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = fileURLToPath(new URL("../assets/api-reference/", import.meta.url));

/** Whether node_modules holds every package of the lockfile at its version and integrity, and no other. */
function upToDate() {
  const read = (file) => JSON.parse(readFileSync(join(dir, file), "utf8")).packages ?? {};
  if (!existsSync(join(dir, "node_modules/@scalar/api-reference/dist/browser/standalone.js"))) return false;
  try {
    const locked = read("package-lock.json");
    const installed = read("node_modules/.package-lock.json");
    const wanted = Object.keys(locked).filter((k) => k !== "");
    return (
      wanted.length === Object.keys(installed).length &&
      wanted.every(
        (k) => installed[k]?.version === locked[k].version && installed[k]?.integrity === locked[k].integrity,
      )
    );
  } catch {
    return false;
  }
}

if (upToDate()) {
  console.log("assets/api-reference (Scalar's browser bundle) is up to date");
  process.exit(0);
}
const npm = process.env.npm_execpath;
if (!npm) {
  console.error("install-api-reference: run by npm (npm install or npm ci), which sets npm_execpath");
  process.exit(1);
}

// The settings npm hands its lifecycle scripts that name the root project's layout, not this package's.
const env = { ...process.env };
for (const key of Object.keys(env)) {
  if (/^npm_config_(workspaces?|include_workspace_root|global|prefix|location)$/i.test(key)) delete env[key];
}

console.log(`installing assets/api-reference (Scalar's browser bundle) on Node ${process.version}`);
const result = spawnSync(process.execPath, [npm, "ci", "--no-audit", "--no-fund"], {
  cwd: dir,
  env,
  stdio: "inherit",
});
if (result.error) throw result.error;
process.exit(result.status ?? 1);
