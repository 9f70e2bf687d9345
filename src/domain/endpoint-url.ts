import type { ValidationIssue } from "./errors.ts";

export const MAX_URL_LENGTH = 2048;

/** Problems with an endpoint URL: absolute https (http only when allowed), at most 2048 characters, no credentials. */
export function endpointUrlIssues(
  url: string,
  opts: { allowHttp: boolean },
  path = "url",
): ValidationIssue[] {
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
  return [];
}
