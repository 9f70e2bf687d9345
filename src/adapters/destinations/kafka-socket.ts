import { isIP, Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import type { ISocketFactory } from "kafkajs";
import { BlockedAddressError, type Resolve, resolveChecked } from "../delivery/guarded-lookup.ts";

/** The code a TLS socket's error gets when TCP connected but the handshake never finished. */
export const TLS_HANDSHAKE_CODE = "ERR_TLS_HANDSHAKE_FAILED";

const KEEP_ALIVE_MS = 60_000;

// kafkajs reads a bootstrap broker as `host:port` split at ":", so "[::1]:9092" cannot reach it as it
// is: the address travels as a name of its own (an IPv6 address has no "-", so the mapping is
// reversible), and this factory, which connects every broker, reads the address back.
const IPV6_PREFIX = "herald-ipv6-";

/** A broker as kafkajs can read it: `[2001:db8::1]:9092` becomes `herald-ipv6-2001-db8--1:9092`. */
export function kafkajsBroker(broker: string): string {
  const bracketed = /^\[([0-9A-Fa-f:.]+)\]:(\d+)$/.exec(broker);
  return bracketed
    ? `${IPV6_PREFIX}${(bracketed[1] as string).replaceAll(":", "-")}:${bracketed[2]}`
    : broker;
}

/** The host kafkajsBroker stood in for, or the host itself. */
function brokerHost(host: string): string {
  return host.startsWith(IPV6_PREFIX) ? host.slice(IPV6_PREFIX.length).replaceAll("-", ":") : host;
}

/**
 * kafkajs's socket factory with Herald's address guard (ADR 27, CONTRACT §5): every broker host, the
 * bootstrap ones and each one the cluster's metadata advertises (kafkajs connects to all of them through
 * this factory), is resolved and checked, and the socket connects to the address that was checked, so a
 * name whose answer changes between two lookups cannot steer it inward. TLS names the host (SNI and the
 * certificate check) while the TCP connection goes to the checked address.
 *
 * kafkajs wants the socket at once, so the socket is returned unconnected and connected once the check
 * answers; a refused or unresolvable host destroys it with the error, which kafkajs reports as a
 * connection error carrying the code (EBLOCKEDADDRESS, ENOTFOUND, ...). Works the same on Node, Bun and Deno.
 */
export function guardedSocketFactory(guard: {
  resolve: Resolve;
  /** Which addresses are refused; `() => false` when private networks are allowed. */
  isBlocked: (ip: string) => boolean;
}): ISocketFactory {
  return ({ host: given, port, ssl, onConnect }) => {
    const host = brokerHost(given);
    const raw = new Socket();
    let connected = false;
    let secured = false;
    raw.once("connect", () => {
      connected = true;
    });
    const socket = ssl
      ? tlsConnect({ ...ssl, socket: raw, host, ...(isIP(host) ? {} : { servername: host }) }, () => {
          secured = true;
          onConnect();
        })
      : raw;
    if (!ssl) raw.once("connect", onConnect);
    if (ssl) {
      // First listener, before kafkajs's: a plaintext listener or a middlebox that drops the handshake
      // shows as a reset, which is a TLS failure here (the TCP connection was made), not a connection one.
      socket.on("error", (err: NodeJS.ErrnoException) => {
        if (connected && !secured && (err.code === undefined || err.code === "ECONNRESET")) {
          err.code = TLS_HANDSHAKE_CODE;
        }
      });
    }
    socket.setKeepAlive(true, KEEP_ALIVE_MS);
    checkedAddress(host, guard).then(
      (address) => {
        if (!raw.destroyed) raw.connect({ host: address, port });
      },
      (err: Error) => socket.destroy(err),
    );
    return socket;
  };
}

async function checkedAddress(
  host: string,
  guard: { resolve: Resolve; isBlocked: (ip: string) => boolean },
): Promise<string> {
  if (isIP(host)) {
    if (guard.isBlocked(host)) throw new BlockedAddressError(host, host);
    return host;
  }
  const [first] = await resolveChecked(host, guard.resolve, guard.isBlocked);
  // resolveChecked answers at least one address or throws ENOTFOUND.
  return (first as { address: string }).address;
}
