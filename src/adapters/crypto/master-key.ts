import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fromBase64, toBase64 } from "../../domain/encoding.ts";

/**
 * The key that encrypts endpoint secrets: HERALD_MASTER_KEY when given, otherwise one generated once
 * into the data directory (mode 0600) and read back on every later start.
 */
export async function loadMasterKey(given: Uint8Array | null, dataDir: string): Promise<Uint8Array> {
  if (given) return given;
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, "master.key");
  try {
    await writeFile(file, `${toBase64(crypto.getRandomValues(new Uint8Array(32)))}\n`, {
      flag: "wx",
      mode: 0o600,
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
  const key = fromBase64((await readFile(file, "utf8")).trim());
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
  return key;
}
