import { promises as dns, type LookupAddress } from "node:dns";

/** Resolves a host name to all its addresses; injectable so tests never query real DNS. */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

/** The error code a refused address carries, so the sender can tell it from a DNS failure. */
export const BLOCKED_ADDRESS_CODE = "EBLOCKEDADDRESS";

export class BlockedAddressError extends Error {
  readonly code = BLOCKED_ADDRESS_CODE;
  readonly hostname: string;
  readonly address: string;
  constructor(hostname: string, address: string) {
    super(`delivery to ${hostname} refused: ${address} is not a public address`);
    this.hostname = hostname;
    this.address = address;
    this.name = "BlockedAddressError";
  }
}

/** The operating system's resolver (getaddrinfo: hosts file, then DNS), every address in its order. */
export const systemResolve: Resolve = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/**
 * Resolves and checks every address; refuses the whole name when ANY address is blocked, so a
 * record set mixing a public and a private address cannot steer a connection inward.
 */
export async function resolveChecked(
  hostname: string,
  resolve: Resolve,
  isBlocked: (ip: string) => boolean,
): Promise<LookupAddress[]> {
  const addresses = await resolve(hostname);
  if (addresses.length === 0) {
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", hostname });
  }
  const blocked = addresses.find((a) => isBlocked(a.address));
  if (blocked) throw new BlockedAddressError(hostname, blocked.address);
  return addresses;
}

interface NodeLookupOptions {
  family?: number | string;
  all?: boolean;
}
type NodeLookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A `lookup` with the signature net.connect/tls.connect call. */
export type NodeLookup = (hostname: string, options: NodeLookupOptions, callback: NodeLookupCallback) => void;

/**
 * A lookup for net.connect/tls.connect that refuses blocked addresses. The socket connects to an
 * address this function returned, so the check holds for the address actually connected to and a
 * DNS answer that changes between lookups (rebinding) is checked again on every new connection.
 */
export function createGuardedLookup(resolve: Resolve, isBlocked: (ip: string) => boolean): NodeLookup {
  return (hostname, options, callback) => {
    const family =
      options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : Number(options.family ?? 0);
    resolveChecked(hostname, resolve, isBlocked)
      .then((all) => {
        const wanted = family === 4 || family === 6 ? all.filter((a) => a.family === family) : all;
        const first = wanted[0];
        if (!first) {
          const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
          callback(err, options.all ? [] : "", undefined);
          return;
        }
        if (options.all) callback(null, wanted);
        else callback(null, first.address, first.family);
      })
      .catch((err: NodeJS.ErrnoException) => callback(err, options.all ? [] : "", undefined));
  };
}

/**
 * `work`'s answer, or the signal's reason as soon as it aborts (a DNS lookup cannot be cancelled, so it is
 * left to finish unheard); `work` itself when there is no signal.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
