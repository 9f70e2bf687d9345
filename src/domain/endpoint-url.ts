import type { ValidationIssue } from "./errors.ts";
import { classifyIpAddress } from "./ip-address.ts";

export const MAX_URL_LENGTH = 2048;

/** Which endpoint URLs a server accepts (HERALD_ALLOW_HTTP_URLS, HERALD_ALLOW_PRIVATE_NETWORKS). */
export interface EndpointUrlPolicy {
  allowHttp: boolean;
  /** When false, a host written as a non-public IP literal is refused (names are checked at send time). */
  allowPrivateNetworks: boolean;
}

/**
 * Problems with an endpoint URL: absolute https (http only when allowed), at most 2048 characters, no
 * credentials, no fragment, and no loopback, private, link-local, metadata or other non-public IP
 * literal as its host unless private networks are allowed. The host is judged as the URL parser
 * normalises it, so 0x7f.1, 2130706433 and [::ffff:127.0.0.1] are all 127.0.0.1.
 */
export function endpointUrlIssues(url: string, opts: EndpointUrlPolicy, path = "url"): ValidationIssue[] {
  if (url.length > MAX_URL_LENGTH) return [{ path, message: `must be at most ${MAX_URL_LENGTH} characters` }];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [{ path, message: "must be an absolute URL" }];
  }
  const schemes = opts.allowHttp ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(parsed.protocol)) {
    return [{ path, message: opts.allowHttp ? "must use https:// or http://" : "must use https://" }];
  }
  if (parsed.username || parsed.password)
    return [{ path, message: "must not contain a user name or password" }];
  if (!parsed.hostname) return [{ path, message: "must name a host" }];
  if (parsed.hash) return [{ path, message: "must not contain a fragment (#...)" }];
  const kind = classifyIpAddress(parsed.hostname);
  if (kind === null && !isDnsName(parsed.hostname)) {
    return [
      { path, message: "must name a host of at most 253 characters, in dot-separated labels of 1 to 63" },
    ];
  }
  if (kind !== null && kind !== "public" && !opts.allowPrivateNetworks) {
    return [
      {
        path,
        message: `must not point at a ${kind} address (${parsed.hostname}); this server accepts only public addresses`,
      },
    ];
  }
  return [];
}

/**
 * True when a host name fits DNS: at most 253 characters, labels of 1 to 63 (a trailing dot allowed).
 * Nothing else can resolve, and a longer name fails inside TLS (SNI) in a way that has crashed Node.
 */
export function isDnsName(host: string): boolean {
  const name = host.endsWith(".") ? host.slice(0, -1) : host;
  if (name.length === 0 || name.length > 253) return false;
  return name.split(".").every((label) => label.length >= 1 && label.length <= 63);
}
