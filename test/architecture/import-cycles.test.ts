import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

// Imports run one way (issue 27 item 3): Biome's noImportCycles, set in biome.json beside the rules that
// keep the layers pointing inward, fails `npm run lint` on any import circle in the project, counting
// `import type` and `import()` too (a type-only circle is still two modules that cannot be read apart).
// This file proves the rule as configured catches each kind of circle on a tiny graph, and that src has
// none.
const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const BIOME = join(ROOT, "node_modules", ".bin", "biome");

/** The rule's setting in the project's biome.json. */
function projectSetting(): unknown {
  const config = JSON.parse(readFileSync(join(ROOT, "biome.json"), "utf8"));
  return config.linter?.rules?.suspicious?.noImportCycles;
}

/** Biome's exit code and output on `files` in a directory of their own, with the project's setting of the rule. */
async function lint(files: Record<string, string>): Promise<{ code: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), "herald-cycles-"));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  writeFileSync(
    join(dir, "biome.json"),
    JSON.stringify({
      linter: { rules: { preset: "none", suspicious: { noImportCycles: projectSetting() } } },
    }),
  );
  try {
    const { stdout, stderr } = await run(BIOME, ["lint", "--max-diagnostics=50", "."], {
      cwd: dir,
      timeout: 60_000,
    });
    return { code: 0, output: stdout + stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? -1, output: `${err.stdout ?? ""}${err.stderr ?? ""}` };
  }
}
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The files of `output` Biome reports as importing into a cycle. */
const inCycle = (output: string) =>
  [
    ...new Set(
      [...output.matchAll(/^(\S+\.ts):\d+:\d+ lint\/suspicious\/noImportCycles/gm)].map((m) => m[1]),
    ),
  ].sort();

describe("import circles", () => {
  it("are refused by the project's lint, counting every kind of import", async () => {
    expect(projectSetting()).toEqual({ level: "error", options: { ignoreTypes: false } });
    const circles = await lint({
      // The domain's old circle: a value one way, a type back.
      "catalog.ts": 'import { REASONS } from "./delivery.ts";\nexport const CATALOG = [...REASONS];\n',
      "delivery.ts":
        'import type { Catalog } from "./types.ts";\nexport const REASONS = ["a"];\nexport type D = Catalog;\n',
      "types.ts": 'import type { CATALOG } from "./catalog.ts";\nexport type Catalog = typeof CATALOG;\n',
      // Telemetry's old circle: a dynamic import one way, a type back.
      "load.ts":
        'import type { T } from "./sdk.ts";\nexport const load = async (): Promise<T> => (await import("./sdk.ts")).start();\n',
      "sdk.ts":
        'import type { load } from "./load.ts";\nexport type T = typeof load;\nexport const start = () => ({}) as T;\n',
    });
    expect(circles.code).not.toBe(0);
    expect(inCycle(circles.output)).toEqual(["catalog.ts", "delivery.ts", "load.ts", "sdk.ts", "types.ts"]);
  });

  it("are not reported where imports run one way", async () => {
    const oneWay = await lint({
      "reasons.ts": 'export const REASONS = ["a"];\n',
      "catalog.ts": 'import { REASONS } from "./reasons.ts";\nexport const CATALOG = [...REASONS];\n',
      "delivery.ts":
        'import type { CATALOG } from "./catalog.ts";\nexport { REASONS } from "./reasons.ts";\nexport type D = typeof CATALOG;\n',
    });
    expect(oneWay.output).not.toMatch(/noImportCycles|deprecated/i);
    expect(oneWay).toEqual({ code: 0, output: expect.stringMatching(/Checked \d+ files/) });
  });

  it("are none in src", async () => {
    const { stdout, stderr } = await run(BIOME, ["lint", "--only=suspicious/noImportCycles", "src"], {
      cwd: ROOT,
      timeout: 120_000,
    }).catch((e: { stdout?: string; stderr?: string }) => ({
      stdout: e.stdout ?? "",
      stderr: e.stderr ?? "",
    }));
    expect(inCycle(stdout + stderr)).toEqual([]);
    expect(stdout + stderr).toMatch(/Checked \d+ files/);
  });
});
