import { createHmac } from "node:crypto";
import type { SubjectKeys } from "../../app/ports/system.ts";

/** Names the derived key, so the master key's other uses (sealing secrets) never share its bytes. */
const PURPOSE = "herald/subject-keys/v1";

/**
 * Recipient keys: HMAC-SHA256 of "<tenant>/<project>/<recipient>" under a key derived from the master
 * key (HMAC-SHA256(master, purpose)). Without the master key a stored key cannot be tested against a
 * guessed address, and the same address in two projects gives unrelated keys.
 *
 * Computed with node:crypto (Node, Bun and Deno all have it), which answers at once: every publish with a
 * recipient computes one, and Web Crypto's asynchronous job cost ~0.3 ms of main-thread time each on the
 * benchmark's machine (4% of Herald's CPU on PostgreSQL). The bytes are the same as Web Crypto's.
 */
export async function createSubjectKeys(master32: Uint8Array): Promise<SubjectKeys> {
  if (master32.length !== 32) throw new Error("the master key must be 32 bytes");
  const key = createHmac("sha256", master32).update(PURPOSE).digest();
  return {
    recipientKey(scope, recipient) {
      return Promise.resolve(
        createHmac("sha256", key).update(`${scope.tenantId}/${scope.projectId}/${recipient}`).digest("hex"),
      );
    },
  };
}
