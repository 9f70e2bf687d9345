import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * Bun's or Deno's binary: runtimes/bun-deno, installed by `npm run test:all` and CI
 * (scripts/install-runtimes.mjs), not by `npm install`; `npm test` runs nothing that needs them (ADR 26).
 */
export const runtimeBin = (name: "bun" | "deno") =>
  join(ROOT, "runtimes", "bun-deno", "node_modules", ".bin", name);
