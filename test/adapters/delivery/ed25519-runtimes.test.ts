import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { nodeEd25519 } from "../../../src/adapters/delivery/node-ed25519.ts";
import { nodeHmac } from "../../../src/adapters/delivery/node-hmac.ts";
import { deliveryHeaders } from "../../../src/adapters/delivery/outcome.ts";
import { signedHeaders } from "../../../src/domain/signature-scheme.ts";
import { ed25519PublicKey, newEd25519Secret } from "../../../src/domain/standard-webhooks-ed25519.ts";
import { runtimeBin } from "../../support/runtimes.ts";

// Web Crypto Ed25519 on the runtimes Herald runs on: Bun and Deno sign exactly the bytes Node signs
// (Ed25519 is deterministic), derive the same public key, and the TypeScript verifier runs there too.
const run = promisify(execFile);
const root = fileURLToPath(new URL("../../../", import.meta.url));
const fixture = fileURLToPath(new URL("./fixtures/ed25519-sign.ts", import.meta.url));
const bin = (name: "bun" | "deno") => runtimeBin(name);

const RUNTIMES = [
  { name: "bun", args: [fixture] },
  // The project's node_modules (encoding.ts imports @noble/hashes), as Herald runs on Deno.
  { name: "deno", args: ["run", "--allow-all", "--node-modules-dir=manual", "--no-lock", fixture] },
] as const;

const SEED = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const ID = "evt_0123456789abcdef0123456789abcdef";
const TS = 1_767_268_800;
const BODY = JSON.stringify({
  id: ID,
  type: "message.delivered",
  version: "1",
  occurred_at: "2026-01-01T12:00:00.000Z",
  tenant_id: "5f0c6d3a-8b1e-4c2f-9a7d-1e2b3c4d5e6f",
  project_id: "9d8c7b6a-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
  resource_id: "0b6b4c1e-3f1a-4d5e-9c2b-7a8f9e0d1c2b",
  data: { note: "héllo ✓ 🚀" },
});

async function onNode() {
  const seed = Uint8Array.from(SEED.match(/../g) ?? [], (h) => Number.parseInt(h, 16));
  const secret = newEd25519Secret(seed);
  const other = newEd25519Secret(seed.map((b) => b ^ 0xff));
  const request = {
    url: "https://receiver.example/",
    body: BODY,
    eventId: ID,
    secrets: [secret, other],
    timestamp: TS,
    scheme: "standard-webhooks-ed25519" as const,
    headers: [],
  };
  const fast = Object.fromEntries(signedHeaders(request, nodeHmac, nodeEd25519));
  return {
    publicKey: await ed25519PublicKey(secret),
    headers: await deliveryHeaders(request, "Herald/test"),
    fast,
  };
}

describe.each(RUNTIMES)("Ed25519 signing on $name", (runtime) => {
  it("gives Node's public key and signatures, and verifies with the TypeScript library", async () => {
    const node = await onNode();
    expect(node.headers["webhook-signature"]).toBe(node.fast["webhook-signature"]);
    const { stdout } = await run(bin(runtime.name), [...runtime.args, SEED, ID, String(TS), BODY], {
      cwd: root,
      timeout: 60_000,
    });
    const out = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
    expect(out.publicKey).toBe(node.publicKey);
    expect(out.headers).toEqual(node.headers);
    expect(out.headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(out.verified).toBe(JSON.parse(BODY).id);
    expect(out.refused).toBe("signature_mismatch");
  });
});
