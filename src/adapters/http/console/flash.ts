import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { ConsoleEnv, Mode } from "./env.ts";
import { COOKIE, isHttps } from "./security.ts";

/**
 * A one-time message from a form's POST to the GET page its redirect (303) leads to: what only that
 * answer may show, such as a new signing secret (Post/Redirect/Get without showing the secret twice).
 *
 * It travels in a cookie, sealed (AES-GCM) with a key derived from the session's own secret, so it
 * needs no shared state between the Herald processes behind a load balancer, and no other session,
 * nor anyone reading the cookie jar without the session cookie, can open it. It lives two minutes
 * and the first GET that shows it clears it; a reload or the back button then finds nothing. Its
 * cookie's path is that one page, so no other request carries it.
 */
export type Flash = {
  kind: "secret";
  endpointId: string;
  /** What the receiver verifies with: a `whsec_` secret, or an Ed25519 endpoint's `whpk_` public key. */
  secret: string;
  /** What issued it: the endpoint's creation, a rotation, or a switch of scheme to another kind of key. */
  why: "created" | "rotated" | "switched";
};

export const FLASH_COOKIE: Record<Mode, string> = {
  console: "herald_console_flash",
  portal: "herald_portal_flash",
};
const FLASH_TTL_MS = 120_000;
const encoder = new TextEncoder();

/** The flash key of a session: HKDF-SHA-256 of the session cookie's secret, one key per mode. */
async function flashKey(sessionSecret: string, mode: Mode): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey("raw", encoder.encode(sessionSecret), "HKDF", false, [
    "deriveKey",
  ]);
  return crypto.subtle.deriveKey(
    {
      name: "HKDF",
      hash: "SHA-256",
      salt: encoder.encode("herald console flash v1"),
      info: encoder.encode(mode),
    },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

const toBase64Url = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");

const fromBase64Url = (text: string): Uint8Array<ArrayBuffer> | null => {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return null;
  const bin = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
};

function cookieOptions(c: Context, mode: Mode, path: string) {
  const https = isHttps(c);
  // As the session cookie: a portal inside another site's iframe needs SameSite=None to get it back.
  const embeddable = mode === "portal" && https;
  return {
    path,
    httpOnly: true,
    secure: https,
    sameSite: embeddable ? ("None" as const) : ("Strict" as const),
    ...(embeddable ? { partitioned: true } : {}),
  };
}

/**
 * Seals `flash` into the answer (a redirect to `path`), for the session of this request. The cookie is
 * scoped to that one page: no other request carries it, and flashes for two pages never collide.
 */
export async function setFlash(
  c: Context<ConsoleEnv>,
  mode: Mode,
  path: string,
  flash: Flash,
): Promise<void> {
  const session = getCookie(c, COOKIE[mode]);
  if (!session) return;
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const plain = encoder.encode(JSON.stringify({ exp: Date.now() + FLASH_TTL_MS, flash }));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await flashKey(session, mode), plain),
  );
  const value = new Uint8Array(iv.length + sealed.length);
  value.set(iv);
  value.set(sealed, iv.length);
  setCookie(c, FLASH_COOKIE[mode], toBase64Url(value), {
    ...cookieOptions(c, mode, path),
    maxAge: FLASH_TTL_MS / 1000,
  });
}

/**
 * The flash of this session that `accept` takes, or null (none, expired, another session's, forged).
 * Any flash found is cleared, taken or not: it is for the page right after the form, and only once.
 */
export async function takeFlash(
  c: Context<ConsoleEnv>,
  mode: Mode,
  path: string,
  accept: (flash: Flash) => boolean,
): Promise<Flash | null> {
  const raw = getCookie(c, FLASH_COOKIE[mode]);
  if (raw === undefined) return null;
  deleteCookie(c, FLASH_COOKIE[mode], cookieOptions(c, mode, path));
  const session = getCookie(c, COOKIE[mode]);
  const bytes = fromBase64Url(raw);
  if (!session || !bytes || bytes.length <= 12) return null;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.subarray(0, 12) },
      await flashKey(session, mode),
      bytes.subarray(12),
    );
    const { exp, flash } = JSON.parse(new TextDecoder().decode(plain)) as { exp: number; flash: Flash };
    return typeof exp === "number" && exp > Date.now() && accept(flash) ? flash : null;
  } catch {
    return null;
  }
}
