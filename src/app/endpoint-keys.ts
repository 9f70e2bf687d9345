import type { Endpoint } from "../domain/endpoint.ts";
import { type KeyKind, keyKind } from "../domain/signature-scheme.ts";
import { newEndpointSecret } from "../domain/signing.ts";
import { ed25519PublicKey, newEd25519Secret } from "../domain/standard-webhooks-ed25519.ts";
import type { AppDeps } from "./deps.ts";

const PUBLIC_KEY_CACHE_LIMIT = 10_000;

/** Endpoints' signing keys: issuing one of a kind, and the public key of an Ed25519 endpoint. */
export function endpointKeys(deps: AppDeps) {
  const { ids, cipher } = deps;

  /**
   * A new signing key of a kind, plain and sealed, and what the receiver verifies with: an HMAC
   * secret is both; an Ed25519 key (sealed as `whsk_ed25519_…`, like a secret) shows its public key.
   */
  const issueKey = async (kind: KeyKind) => {
    const plain =
      kind === "ed25519" ? newEd25519Secret(ids.randomBytes(32)) : newEndpointSecret(ids.randomBytes(32));
    const shown = kind === "ed25519" ? await ed25519PublicKey(plain) : plain;
    return { sealed: await cipher.seal(plain), shown };
  };

  // A sealed text always opens to the same key, so its public key is kept (it is public).
  const publicKeyOf = new Map<string, Promise<string>>();
  const publicKey = (sealed: string) => {
    let key = publicKeyOf.get(sealed);
    if (!key) {
      if (publicKeyOf.size >= PUBLIC_KEY_CACHE_LIMIT) publicKeyOf.clear();
      key = cipher.open(sealed).then(ed25519PublicKey);
      key.catch(() => publicKeyOf.delete(sealed));
      publicKeyOf.set(sealed, key);
    }
    return key;
  };

  return {
    issueKey,

    /**
     * The public key (`whpk_…`) of each Ed25519 endpoint: its current key's; HMAC endpoints have none.
     * Derived from the sealed private key, so nothing but the key itself is stored (ADR 13).
     */
    async publicKeys(endpoints: readonly Endpoint[]): Promise<Map<string, string>> {
      const found = await Promise.all(
        endpoints
          .filter((e) => keyKind(e.signatureScheme) === "ed25519")
          .map(async (e) => {
            const current = e.secrets.find((s) => s.expiresAt === null) ?? e.secrets[0];
            return current ? ([e.id, await publicKey(current.sealed)] as const) : null;
          }),
      );
      return new Map(found.filter((x) => x !== null));
    },
  };
}

export type EndpointKeys = ReturnType<typeof endpointKeys>;
