#!/usr/bin/env node
// The `herald` command: runs the TypeScript CLI through tsx's loader.
import { register } from "tsx/esm/api";

register();
const { runCli } = await import("../src/cli/main.ts");
const code = await runCli(process.argv.slice(2), {
  out: (t) => process.stdout.write(t.endsWith("\n") ? t : `${t}\n`),
  err: (t) => process.stderr.write(t.endsWith("\n") ? t : `${t}\n`),
  env: process.env,
});
process.exit(code);
