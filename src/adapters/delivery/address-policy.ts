/**
 * Which IP addresses a delivery may never connect to (unless private networks are allowed):
 * everything that is not ordinary global unicast. Pure and runtime-neutral; anything that does not
 * parse as an IP address is treated as blocked, so a parsing gap fails closed.
 */

type V4Range = readonly [base: number, prefix: number];

// IANA special-purpose IPv4 ranges that are not globally reachable.
const BLOCKED_V4: readonly V4Range[] = [
  [v4(0, 0, 0, 0), 8], // "this network", unspecified
  [v4(10, 0, 0, 0), 8], // private
  [v4(100, 64, 0, 0), 10], // CGNAT shared address space
  [v4(127, 0, 0, 0), 8], // loopback
  [v4(169, 254, 0, 0), 16], // link-local, cloud metadata 169.254.169.254
  [v4(172, 16, 0, 0), 12], // private
  [v4(192, 0, 0, 0), 24], // IETF protocol assignments
  [v4(192, 0, 2, 0), 24], // documentation TEST-NET-1
  [v4(192, 88, 99, 0), 24], // deprecated 6to4 relay anycast
  [v4(192, 168, 0, 0), 16], // private
  [v4(198, 18, 0, 0), 15], // benchmarking
  [v4(198, 51, 100, 0), 24], // documentation TEST-NET-2
  [v4(203, 0, 113, 0), 24], // documentation TEST-NET-3
  [v4(224, 0, 0, 0), 4], // multicast
  [v4(240, 0, 0, 0), 4], // reserved, and 255.255.255.255 broadcast
];

function v4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function inV4Range(addr: number, [base, prefix]: V4Range): boolean {
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

/** An IPv6 address as eight 16-bit groups, or null. Accepts "::" compression and a trailing dotted IPv4. */
export function parseIPv6(text: string): number[] | null {
  let s = text;
  const zone = s.indexOf("%");
  if (zone !== -1) s = s.slice(0, zone);
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
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

function embeddedV4(hi: number, lo: number): number {
  return ((hi << 16) | lo) >>> 0;
}

function isBlockedV4(addr: number): boolean {
  return BLOCKED_V4.some((r) => inV4Range(addr, r));
}

function isBlockedV6(g: number[]): boolean {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  // ::/96: unspecified ::, loopback ::1 and the deprecated IPv4-compatible form; none is a real peer.
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return true;
  // ::ffff:0:0/96 IPv4-mapped: the socket ends up at the embedded IPv4 address.
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) {
    return isBlockedV4(embeddedV4(g6, g7));
  }
  // ::ffff:0:0:0/96 IPv4-translated (SIIT).
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0) return true;
  // 64:ff9b::/96 well-known NAT64 prefix: judged by the IPv4 address it reaches.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return isBlockedV4(embeddedV4(g6, g7));
  }
  // 64:ff9b:1::/48 local-use NAT64.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return true;
  // 100::/64 discard-only.
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return true;
  // 2001::/32 Teredo (tunnels to an obfuscated IPv4 peer), 2001:db8::/32 documentation.
  if (g0 === 0x2001 && (g1 === 0 || g1 === 0xdb8)) return true;
  // 2002::/16 6to4: judged by the IPv4 address in bits 16..47.
  if (g0 === 0x2002) return isBlockedV4(embeddedV4(g1, g2));
  // fc00::/7 unique local (includes the EC2 metadata address fd00:ec2::254).
  if ((g0 & 0xfe00) === 0xfc00) return true;
  // fe80::/10 link-local, fec0::/10 deprecated site-local.
  if ((g0 & 0xffc0) === 0xfe80 || (g0 & 0xffc0) === 0xfec0) return true;
  // ff00::/8 multicast.
  if ((g0 & 0xff00) === 0xff00) return true;
  return false;
}

/**
 * True when a delivery must not connect to this IP address: loopback, private, link-local, CGNAT,
 * multicast, unspecified, broadcast, reserved, documentation, IPv6 unique-local and cloud metadata,
 * including IPv4 addresses hidden in IPv6 forms (mapped, compatible, NAT64, 6to4). Not an IP: true.
 */
export function isBlockedAddress(ip: string): boolean {
  const v4addr = parseIPv4(ip);
  if (v4addr !== null) return isBlockedV4(v4addr);
  const v6 = parseIPv6(ip);
  if (v6 !== null) return isBlockedV6(v6);
  return true;
}

/** True when the text is an IP address literal (IPv4 dotted quad or IPv6, brackets allowed). */
export function isIpLiteral(host: string): boolean {
  return parseIPv4(host) !== null || parseIPv6(host) !== null;
}
