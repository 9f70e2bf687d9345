/**
 * The egress proxy deliveries go through (HERALD_DELIVERY_PROXY) and the hosts that bypass it
 * (HERALD_DELIVERY_NO_PROXY), parsed once at start (ADR 21). Pure and runtime-neutral: the tunnel
 * itself is in src/adapters/delivery/proxy-tunnel.ts.
 */
import { toBase64 } from "./encoding.ts";
import { parseIPv4, parseIPv6 } from "./ip-address.ts";

/** An HTTP forward proxy that accepts CONNECT. Holds the credentials: never log it whole. */
export interface EgressProxy {
  /** Host name or IP literal (IPv6 without brackets). */
  host: string;
  port: number;
  /** `Basic <base64(user:password)>` when the URL carried credentials, else null. A secret. */
  authorization: string | null;
  /** `http://host:port`, without the credentials: what logs and messages may show. */
  display: string;
}

/** One HERALD_DELIVERY_NO_PROXY entry. */
export type NoProxyRule =
  | { kind: "all" }
  /** A host name: matches it and every name under it (`example.com` → `api.example.com`). */
  | { kind: "domain"; name: string }
  /** An IP range (a single address is /32 or /128), matched against IP-literal endpoint hosts. */
  | { kind: "v4"; base: number; prefix: number }
  | { kind: "v6"; groups: number[]; prefix: number };

/** Why a HERALD_DELIVERY_PROXY or HERALD_DELIVERY_NO_PROXY value was refused; never repeats a credential. */
export class ProxySettingError extends Error {}

/**
 * Parses `http://[user:password@]host[:port]`. Only http proxies are supported (CONNECT over plain
 * TCP to the proxy); the port defaults to 80. Messages name what is wrong without echoing the URL,
 * which may hold a password.
 */
export function parseEgressProxy(text: string): EgressProxy {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new ProxySettingError("must be a URL like http://proxy.internal:3128");
  }
  if (url.protocol !== "http:") {
    throw new ProxySettingError(
      `must be an http:// proxy URL (CONNECT); ${url.protocol.replace(/:$/, "")}:// proxies are not supported`,
    );
  }
  if (url.hostname === "") throw new ProxySettingError("must name the proxy's host");
  if ((url.pathname !== "" && url.pathname !== "/") || url.search !== "" || url.hash !== "") {
    throw new ProxySettingError("must be only scheme, host and port (no path, query or fragment)");
  }
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port === "" ? 80 : Number(url.port);
  let authorization: string | null = null;
  if (url.username !== "" || url.password !== "") {
    let user: string;
    let password: string;
    try {
      user = decodeURIComponent(url.username);
      password = decodeURIComponent(url.password);
    } catch {
      throw new ProxySettingError("has credentials that are not valid percent-encoding");
    }
    authorization = `Basic ${toBase64(new TextEncoder().encode(`${user}:${password}`))}`;
  }
  return { host, port, authorization, display: `http://${url.host}` };
}

/**
 * Parses a comma- (or space-) separated list the way curl reads NO_PROXY: `*` (every host), host
 * names and domain suffixes (`example.com` and `.example.com` both match the name and everything under
 * it), IP addresses and CIDR ranges (matched against endpoints whose URL host is an IP literal).
 */
export function parseNoProxy(text: string): NoProxyRule[] {
  const rules: NoProxyRule[] = [];
  for (const raw of text.split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (entry === "") continue;
    if (entry === "*") {
      rules.push({ kind: "all" });
      continue;
    }
    const rule = ipRule(entry) ?? domainRule(entry);
    if (rule === null) {
      throw new ProxySettingError(
        `entries must be host names, domain suffixes, IP addresses, CIDR ranges or * (got "${raw.trim()}")`,
      );
    }
    rules.push(rule);
  }
  return rules;
}

function ipRule(entry: string): NoProxyRule | null {
  const [addr = "", bits, ...more] = entry.split("/");
  if (more.length > 0) return null;
  const v4 = parseIPv4(addr);
  const v6 = v4 === null ? parseIPv6(addr) : null;
  if (v4 === null && v6 === null) return null;
  const max = v4 !== null ? 32 : 128;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
  if (!(prefix >= 0 && prefix <= max)) return null;
  return v4 !== null ? { kind: "v4", base: v4, prefix } : { kind: "v6", groups: v6 ?? [], prefix };
}

function domainRule(entry: string): NoProxyRule | null {
  const name = entry.replace(/^\*?\./, "").replace(/\.$/, "");
  if (!/^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/.test(name)) return null;
  return { kind: "domain", name };
}

/** True when a delivery to `host` (a URL's hostname, IPv6 in brackets or not) goes direct, not through the proxy. */
export function bypassesProxy(rules: readonly NoProxyRule[], host: string): boolean {
  if (rules.length === 0) return false;
  const h = host
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  const v4 = parseIPv4(h);
  const v6 = v4 === null ? parseIPv6(h) : null;
  return rules.some((rule) => {
    switch (rule.kind) {
      case "all":
        return true;
      case "domain":
        return v4 === null && v6 === null && (h === rule.name || h.endsWith(`.${rule.name}`));
      case "v4":
        return (
          v4 !== null && (rule.prefix === 0 || v4 >>> (32 - rule.prefix) === rule.base >>> (32 - rule.prefix))
        );
      default:
        return v6 !== null && v6InRange(v6, rule.groups, rule.prefix);
    }
  });
}

function v6InRange(addr: number[], base: number[], prefix: number): boolean {
  for (let i = 0, left = prefix; left > 0; i++, left -= 16) {
    const bits = Math.min(16, left);
    const mask = (0xffff << (16 - bits)) & 0xffff;
    if (((addr[i] ?? 0) & mask) !== ((base[i] ?? 0) & mask)) return false;
  }
  return true;
}
