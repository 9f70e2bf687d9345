import type { SubjectKeys } from "../../app/ports/system.ts";
import { toHex } from "../../domain/encoding.ts";

const encoder = new TextEncoder();
/** Names the derived key, so the master key's other uses (sealing secrets) never share its bytes. */
const PURPOSE = "herald/subject-keys/v1";

/**
 * Recipient keys: HMAC-SHA256 of "<tenant>/<project>/<recipient>" under a key derived from the master
 * key (HMAC-SHA256(master, purpose)). Without the master key a stored key cannot be tested against a
 * guessed address, and the same address in two projects gives unrelated keys.
 */
export async function createSubjectKeys(master32: Uint8Array): Promise<SubjectKeys> {
  if (master32.length !== 32) throw new Error("the master key must be 32 bytes");
  const master = await crypto.subtle.importKey(
    "raw",
    new Uint8Array(master32),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const derived = await crypto.subtle.sign("HMAC", master, encoder.encode(PURPOSE));
  const key = await crypto.subtle.importKey("raw", derived, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return {
    async recipientKey(scope, recipient) {
      const mac = await crypto.subtle.sign(
        "HMAC",
        key,
        encoder.encode(`${scope.tenantId}/${scope.projectId}/${recipient}`),
      );
      return toHex(new Uint8Array(mac));
    },
  };
}
