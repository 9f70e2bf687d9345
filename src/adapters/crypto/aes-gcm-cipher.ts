import type { SecretCipher } from "../../app/ports/system.ts";
import { fromBase64, toBase64 } from "../../domain/encoding.ts";

const VERSION = "v1";

/** AES-256-GCM with a random 96-bit nonce per secret; sealed form is "v1.<nonce b64>.<ciphertext+tag b64>". */
export async function createAesGcmCipher(key32: Uint8Array): Promise<SecretCipher> {
  if (key32.length !== 32) throw new Error("the master key must be 32 bytes");
  const key = await crypto.subtle.importKey("raw", new Uint8Array(key32), { name: "AES-GCM" }, false, [
    "encrypt",
    "decrypt",
  ]);
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  return {
    async seal(plain) {
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, encoder.encode(plain));
      return `${VERSION}.${toBase64(iv)}.${toBase64(new Uint8Array(ct))}`;
    },
    async open(sealed) {
      const [version, iv, ct] = sealed.split(".");
      if (version !== VERSION || !iv || !ct) throw new Error("sealed secret has an unknown format");
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: new Uint8Array(fromBase64(iv)) },
        key,
        new Uint8Array(fromBase64(ct)),
      );
      return decoder.decode(plain);
    },
  };
}
