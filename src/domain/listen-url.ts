// A listen session's endpoint URL (ADR 29): `listen://<session key>`. Only the listen-session API
// creates one (the endpoint URL check refuses the scheme), and only the listen sender delivers to it:
// over the CLI's own connection to Herald, never to an address.

export const LISTEN_SCHEME = "listen:";

/** The URL of a new listen session's endpoint. */
export function listenUrl(sessionKey: string): string {
  return `listen://${sessionKey}`;
}

/** The session key a listen URL names, or null for any other URL (https, http). */
export function listenSessionKey(url: string): string | null {
  if (!url.startsWith("listen://")) return null;
  const key = url.slice("listen://".length);
  return /^[0-9a-f-]{36}$/.test(key) ? key : null;
}
