import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createCertificateReader } from "../../../src/adapters/crypto/client-certificates.ts";
import { bin, fixtureRuntimes, root, run } from "../delivery/fixture-runtimes.ts";
import { certificateCases } from "./certificate-cases.ts";

// Issue 30: the CertificateReader answers the same on Bun and Deno as on Node, for every case of
// certificate-cases.ts (clientAuth accepted, serverAuth only refused, no extended key usage accepted, names
// Deno prints otherwise, every kind of key): the facts shown, the key kept (PKCS #8, as exported), the
// errors. Before the reader read the DER, Deno refused issue 30's certificate as not for clients.
const fixture = fileURLToPath(new URL("./fixtures/read-certificates.ts", import.meta.url));

/** What the reader answers for each case on Node, as JSON makes it (dates as ISO strings). */
async function onNode() {
  const { cases } = await certificateCases();
  const reader = createCertificateReader();
  return JSON.parse(JSON.stringify(cases.map(({ name, ...input }) => [name, reader.read(input, "cc")])));
}

describe.each(fixtureRuntimes(fixture))("the client certificate reader on $name", (runtime) => {
  it("answers what it answers on Node for every certificate and key", async () => {
    const { cases } = await certificateCases();
    const dir = mkdtempSync(join(tmpdir(), `herald-x509-${runtime.name}-`));
    const file = join(dir, "cases.json");
    writeFileSync(file, JSON.stringify(cases.map(({ expected: _, ...input }) => input)));
    let stdout: string;
    try {
      ({ stdout } = await run(bin(runtime.name), [...runtime.args, file], { cwd: root, timeout: 120_000 }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const there = JSON.parse(stdout.trim().split("\n").at(-1) ?? "[]") as [string, unknown][];
    // Each case as expected there (so a difference names the case), then everything equal to Node.
    const outcome = (reading: unknown) => {
      const r = reading as { ok: boolean; issues?: { path: string; message: string }[] };
      return r.ok
        ? "accepted"
        : { field: r.issues?.[0]?.path.replace(/^cc\./, ""), message: r.issues?.[0]?.message };
    };
    expect(there.map(([name, reading]) => [name, outcome(reading)])).toEqual(
      cases.map((c) => [c.name, c.expected]),
    );
    expect(there).toEqual(await onNode());
  });
});
