// `npm run test:all`: every test file (npm test's and the SLOW ones of vitest.config.ts) in one vitest run
// with MongoDB, Chromium, Bun and Deno, then the runtime-sensitive suites again on Node 22 (ADR 23, 26).
// It installs the runtimes itself (runtimes/node22, runtimes/bun-deno: scripts/install-runtimes.mjs) and
// builds FerretDB when `go` can (scripts/ferretdb.sh bin). A tool it cannot have is named in one line
// with how to get it; locally the files that need it are left out and the run goes on, in CI
// (CI=true) the run fails. Extra arguments go to both vitest runs (e.g. a reporter).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { installRuntime } from "./install-runtimes.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const CI = /^(true|1)$/i.test(process.env.CI ?? "");
const bin = (dir, name) => join(ROOT, dir, "node_modules", ".bin", name);
const runs = (cmd, args = ["--version"]) =>
  spawnSync(cmd, args, { stdio: "ignore", timeout: 60_000 }).status === 0;
const onPath = (name) =>
  (process.env.PATH ?? "").split(delimiter).some((dir) => dir && existsSync(join(dir, name)));

/** What runs on Node 22 too: what depends on the Node that runs it (ADR 23). */
const NODE22_SUITES = [
  "test/adapters/http/api/",
  "test/e2e/runtimes.test.ts",
  "test/app/engine/",
  "test/adapters/delivery/",
  "test/adapters/destinations/",
  "test/adapters/http/console/browser", // browser.test.ts and browser-destinations.test.ts (a filter matches a part of the path)
  "test/e2e/delivery-crash.test.ts",
];
/** The files each tool is needed by, left out locally when the tool is missing. */
const NEEDS = {
  mongo: [
    "test/adapters/mongo/**",
    "test/e2e/database-outage.test.ts",
    "test/e2e/backend-kill-ferretdb.test.ts",
    "test/e2e/delivery-crash-ferretdb.test.ts",
    "**/*-mongo.test.ts",
  ],
  chromium: ["test/adapters/http/console/browser*.test.ts"],
  "bun-deno": ["**/*-runtimes.test.ts", "test/adapters/http/console/runtimes.test.ts"],
};

const missing = [];
function lack(tool, how) {
  missing.push(tool);
  const consequence = CI ? "CI needs it" : `leaving out ${(NEEDS[tool] ?? ["the Node 22 run"]).join(", ")}`;
  console.error(`test:all: ${how} (${consequence})`);
}

const env = { ...process.env };

if (
  installRuntime("bun-deno") !== 0 ||
  !runs(bin("runtimes/bun-deno", "bun")) ||
  !runs(bin("runtimes/bun-deno", "deno"))
)
  lack(
    "bun-deno",
    "no Bun or Deno: `node scripts/install-runtimes.mjs bun-deno` installs them from npm (network once)",
  );
if (installRuntime("node22") !== 0 || !runs(bin("runtimes/node22", "node")))
  lack(
    "node22",
    "no Node 22: `node scripts/install-runtimes.mjs node22` installs it from npm (network once)",
  );

const chromium = env.HERALD_CHROMIUM ?? "/usr/bin/chromium";
if (!existsSync(chromium))
  lack("chromium", `no Chromium at ${chromium}: apt-get install chromium, or set HERALD_CHROMIUM`);

// FerretDB: the Mongo adapter's tests and the Mongo outage test (a FerretDB of the test's own).
const cachedFerret = env.FERRETDB_BIN ?? join(homedir(), ".cache", "herald-ci", "ferretdb-v1.24.0");
if (!env.HERALD_FERRETDB_BIN && (existsSync(cachedFerret) || onPath("go"))) {
  if (!existsSync(cachedFerret))
    console.log("test:all: building FerretDB with go (scripts/ferretdb.sh bin; minutes, once per machine)");
  const built = spawnSync(join(ROOT, "scripts/ferretdb.sh"), ["bin"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const path = built.stdout?.trim().split("\n").pop();
  if (built.status === 0 && path && existsSync(path)) env.HERALD_FERRETDB_BIN = path;
}
if (!env.HERALD_FERRETDB_BIN || !existsSync(env.HERALD_FERRETDB_BIN)) {
  const mongoElsewhere = env.MONGODB_URI || onPath("mongod") || env.MONGOMS_SYSTEM_BINARY;
  if (CI || !mongoElsewhere)
    lack(
      "mongo",
      "no FerretDB: install Go (scripts/ferretdb.sh bin builds it), set HERALD_FERRETDB_BIN to its binary, or set MONGODB_URI",
    );
}

if (CI && missing.length > 0) {
  console.error(`test:all: missing in CI: ${missing.join(", ")}`);
  process.exit(1);
}

const exclude = missing.flatMap((tool) => NEEDS[tool] ?? []);
const vitest = join(ROOT, "node_modules", "vitest", "vitest.mjs");
const extra = process.argv.slice(2);
let failed = false;

// HERALD_TEST_SET=rest (what .ci/run sets after its `npm test`): the first run takes only the files npm test
// leaves out (vitest.config.ts's SLOW), so no file runs twice.
const rest = process.env.HERALD_TEST_SET === "rest";
console.log(
  `\n== ${rest ? "the files npm test leaves out" : "every test file"}${exclude.length ? `, less ${exclude.join(", ")}` : ""}`,
);
const all = spawnSync(process.execPath, [vitest, "run", ...extra], {
  cwd: ROOT,
  stdio: "inherit",
  env: {
    ...env,
    HERALD_TEST_EXCLUDE: exclude.join(","),
    ...(missing.includes("bun-deno") ? { HERALD_TEST_RUNTIMES: "node" } : {}),
    ...(CI ? { HERALD_VITEST_JSON: join(ROOT, ".ci/tmp/vitest-all.json") } : {}),
  },
});
failed ||= all.status !== 0;

if (!missing.includes("node22")) {
  // Node 22 first on the PATH and running vitest: every `node` and process.execPath in these tests is Node 22.
  const path = `${join(ROOT, "runtimes/node22/node_modules/.bin")}${delimiter}${env.PATH ?? ""}`;
  const node22 = bin("runtimes/node22", "node");
  const version = spawnSync(node22, ["--version"], { encoding: "utf8" }).stdout.trim();
  console.log(`\n== the runtime-sensitive suites again on Node ${version}`);
  const suites = missing.includes("chromium")
    ? NODE22_SUITES.filter((s) => !s.includes("browser"))
    : NODE22_SUITES;
  const matrix = spawnSync(node22, [vitest, "run", ...suites, ...extra], {
    cwd: ROOT,
    stdio: "inherit",
    env: {
      ...env,
      PATH: path,
      HERALD_TEST_RUNTIMES: "node",
      // The suites named above, whichever set the first run took.
      HERALD_TEST_SET: "",
      // Bun and Deno do not change with Node: their fixture files stay out of this run.
      HERALD_TEST_EXCLUDE: [...exclude, "**/*-runtimes.test.ts"].join(","),
      ...(CI ? { HERALD_VITEST_JSON: join(ROOT, ".ci/tmp/vitest-node22.json") } : {}),
    },
  });
  failed ||= matrix.status !== 0;
}

if (missing.length > 0) console.error(`test:all: left out for want of ${missing.join(", ")} (see above)`);
process.exit(failed ? 1 : 0);
