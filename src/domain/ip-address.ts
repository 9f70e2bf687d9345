/**
 * The one classification of literal IP addresses. Endpoint registration refuses a URL whose host is a
 * non-public literal, and the delivery senders refuse to connect to one (every resolved address, so a
 * name or DNS rebinding cannot get around it). Pure and runtime-neutral.
 */

/** What kind of address an IP literal is; everything but `public` is refused unless private networks are allowed. */
export type AddressKind =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "cloud metadata"
  | "shared (CGNAT)"
  | "multicast"
  | "unspecified"
  | "broadcast"
  | "reserved";

type V4Range = readonly [base: number, prefix: number, kind: AddressKind];

// IANA special-purpose IPv4 ranges that are not globally reachable. The first match wins.
const V4_RANGES: readonly V4Range[] = [
  [v4(0, 0, 0, 0), 32, "unspecified"],
  [v4(0, 0, 0, 0), 8, "reserved"], // "this network"
  [v4(10, 0, 0, 0), 8, "private"],
  [v4(100, 64, 0, 0), 10, "shared (CGNAT)"],
  [v4(127, 0, 0, 0), 8, "loopback"],
  [v4(169, 254, 169, 254), 32, "cloud metadata"], // AWS, GCP, Azure, ...
  [v4(169, 254, 0, 0), 16, "link-local"],
  [v4(172, 16, 0, 0), 12, "private"],
  [v4(192, 0, 0, 0), 24, "reserved"], // IETF protocol assignments
  [v4(192, 0, 2, 0), 24, "reserved"], // documentation TEST-NET-1
  [v4(192, 88, 99, 0), 24, "reserved"], // deprecated 6to4 relay anycast
  [v4(192, 168, 0, 0), 16, "private"],
  [v4(198, 18, 0, 0), 15, "reserved"], // benchmarking
  [v4(198, 51, 100, 0), 24, "reserved"], // documentation TEST-NET-2
  [v4(203, 0, 113, 0), 24, "reserved"], // documentation TEST-NET-3
  [v4(224, 0, 0, 0), 4, "multicast"],
  [v4(255, 255, 255, 255), 32, "broadcast"],
  [v4(240, 0, 0, 0), 4, "reserved"],
];

function v4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function inV4Range(addr: number, base: number, prefix: number): boolean {
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return (addr & mask) >>> 0 === (base & mask) >>> 0;
}

/** A dotted-quad IPv4 address as an unsigned 32-bit number, or null. Only the canonical decimal form. */
export function parseIPv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let out = 0;
  for (const p of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out = out * 256 + n;
  }
  return out;
}

/** An IPv6 address as eight 16-bit groups, or null. Accepts "::" compression, brackets, a zone and a trailing dotted IPv4. */
export function parseIPv6(text: string): number[] | null {
  let s = text;
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  const zone = s.indexOf("%");
  if (zone !== -1) s = s.slice(0, zone);
  if (s.length === 0 || !s.includes(":")) return null;

  let tail: number[] = [];
  const lastColon = s.lastIndexOf(":");
  const last = s.slice(lastColon + 1);
  if (last.includes(".")) {
    const embedded = parseIPv4(last);
    if (embedded === null) return null;
    tail = [embedded >>> 16, embedded & 0xffff];
    // Keep the colon when it is part of "::" so the compression below still sees it.
    s = s.slice(0, lastColon + 1);
    if (!s.endsWith("::")) s = s.slice(0, -1);
  }

  const halves = s.split("::");
  if (halves.length > 2) return null;
  const parseGroups = (part: string): number[] | null => {
    if (part === "") return [];
    const groups: number[] = [];
    for (const g of part.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      groups.push(Number.parseInt(g, 16));
    }
    return groups;
  };
  const head = parseGroups(halves[0] ?? "");
  if (head === null) return null;
  if (halves.length === 1) {
    const groups = [...head, ...tail];
    return groups.length === 8 ? groups : null;
  }
  const rest = parseGroups(halves[1] ?? "");
  if (rest === null) return null;
  const known = head.length + rest.length + tail.length;
  if (known > 7) return null;
  return [...head, ...new Array<number>(8 - known).fill(0), ...rest, ...tail];
}

function kindOfV4(addr: number): AddressKind {
  for (const [base, prefix, kind] of V4_RANGES) if (inV4Range(addr, base, prefix)) return kind;
  return "public";
}

function kindOfV6(g: number[]): AddressKind {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const zero64 = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0;
  const low32 = ((g6 << 16) | g7) >>> 0;
  // ::/96: unspecified ::, loopback ::1 and the deprecated IPv4-compatible form; none is a real peer.
  if (zero64 && g4 === 0 && g5 === 0) {
    if (low32 === 0) return "unspecified";
    if (low32 === 1) return "loopback";
    return "reserved";
  }
  // ::ffff:0:0/96 IPv4-mapped: the socket ends up at the embedded IPv4 address.
  if (zero64 && g4 === 0 && g5 === 0xffff) return kindOfV4(low32);
  // ::ffff:0:0:0/96 IPv4-translated (SIIT).
  if (zero64 && g4 === 0xffff && g5 === 0) return "reserved";
  // 64:ff9b::/96 well-known NAT64 prefix: judged by the IPv4 address it reaches.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return kindOfV4(low32);
  // 64:ff9b:1::/48 local-use NAT64.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return "private";
  // 100::/64 discard-only.
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return "reserved";
  // 2001::/32 Teredo (tunnels to an obfuscated IPv4 peer), 2001:db8::/32 documentation.
  if (g0 === 0x2001 && (g1 === 0 || g1 === 0xdb8)) return "reserved";
  // 2002::/16 6to4: judged by the IPv4 address in bits 16..47.
  if (g0 === 0x2002) return kindOfV4(((g1 << 16) | g2) >>> 0);
  // fd00:ec2::254, the EC2 IPv6 metadata service (inside fc00::/7 below, named for the message).
  if (g0 === 0xfd00 && g1 === 0xec2 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && low32 === 0x254) {
    return "cloud metadata";
  }
  // fc00::/7 unique local; fec0::/10 deprecated site-local.
  if ((g0 & 0xfe00) === 0xfc00 || (g0 & 0xffc0) === 0xfec0) return "private";
  // fe80::/10 link-local.
  if ((g0 & 0xffc0) === 0xfe80) return "link-local";
  // ff00::/8 multicast.
  if ((g0 & 0xff00) === 0xff00) return "multicast";
  return "public";
}

/**
 * The kind of an IP literal (IPv4 dotted quad, or IPv6 with or without brackets and zone), or null
 * when the text is not one. IPv4 addresses hidden in IPv6 forms (mapped, NAT64, 6to4) are judged by
 * the IPv4 address they reach.
 */
export function classifyIpAddress(text: string): AddressKind | null {
  const v4addr = parseIPv4(text);
  if (v4addr !== null) return kindOfV4(v4addr);
  const v6 = parseIPv6(text);
  if (v6 !== null) return kindOfV6(v6);
  return null;
}

/**
 * True when a delivery must not connect to this address: anything but a public IP. Text that does not
 * parse as an IP address is blocked too, so a parsing gap fails closed.
 */
export function isBlockedAddress(ip: string): boolean {
  return classifyIpAddress(ip) !== "public";
}

/** True when the text is an IP address literal (IPv4 dotted quad or IPv6, brackets allowed). */
export function isIpLiteral(host: string): boolean {
  return classifyIpAddress(host) !== null;
}
