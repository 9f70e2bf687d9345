#!/usr/bin/env node
// The `herald` command. Node runs the TypeScript CLI itself (type stripping, Node 22.18+ and 26): `npx
// herald` and the npm scripts put node_modules/.bin first on the PATH, so `node` is the carried Node 26
// (ADR 23) whatever the machine has.
await import("../src/main/compile-cache.ts");
const { runCli } = await import("../src/cli/main.ts");
const code = await runCli(process.argv.slice(2), {
  out: (t) => process.stdout.write(t.endsWith("\n") ? t : `${t}\n`),
  err: (t) => process.stderr.write(t.endsWith("\n") ? t : `${t}\n`),
  env: process.env,
});
process.exit(code);
