import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/app/config.ts";
import { silentLogger } from "../../src/app/logger.ts";
import type { Sender } from "../../src/app/ports/sending.ts";
import { createHerald } from "../../src/main/herald.ts";

// The memory store's start (issue 29: memory store to /readyz within a second): nothing it needs is on
// disk, so it writes nothing there, not even a master key (its secrets die with the process).

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const sender: Sender = {
  send: async () => ({
    ok: true,
    responseStatus: 200,
    responseBody: "",
    error: null,
    durationMs: 0,
    retryAfterMs: null,
  }),
  close: async () => {},
};

describe("a memory store start", () => {
  it("answers /readyz and writes nothing into the data directory", async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "herald-memory-")), "data");
    dirs.push(dataDir);
    const config = parseConfig({ HERALD_STORE: "memory", HERALD_DATA_DIR: dataDir });
    const h = await createHerald({
      config,
      logger: silentLogger,
      makeSender: () => sender,
      printFirstToken: false,
    });
    try {
      expect((await h.fetch(new Request("http://herald.test/readyz"))).status).toBe(200);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await h.stop(0);
    }
  });

  it("still keeps its master key in the data directory on a database store", async () => {
    const { loadMasterKey } = await import("../../src/adapters/crypto/master-key.ts");
    const dataDir = mkdtempSync(join(tmpdir(), "herald-key-"));
    dirs.push(dataDir);
    const key = await loadMasterKey(null, dataDir);
    expect(await loadMasterKey(null, dataDir)).toEqual(key);
    expect(existsSync(join(dataDir, "master.key"))).toBe(true);
  });
});
