const FORWARD_TIMEOUT_MS = 10_000;
// Hop-by-hop and length headers describe one connection; fetch sets its own.
const NOT_FORWARDED = new Set([
  "host",
  "connection",
  "keep-alive",
  "content-length",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "expect",
  "proxy-connection",
  "proxy-authorization",
]);

/** Where a delivery was forwarded and what came back: a status, or why none did. */
export interface ForwardResult {
  url: string;
  status: number | null;
  error: string | null;
}

/** A delivery's headers as received, in order, names as sent. */
export type HeaderPairs = readonly (readonly [string, string])[];

/** The pairs of Node's `rawHeaders` ([name, value, name, value, ...]). */
export function rawHeaderPairs(raw: readonly string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i]!, raw[i + 1]!]);
  return pairs;
}

function forwardHeaders(pairs: HeaderPairs): Headers {
  const headers = new Headers();
  for (const [name, value] of pairs) if (!NOT_FORWARDED.has(name.toLowerCase())) headers.append(name, value);
  return headers;
}

/** Re-POSTs a delivery (raw body, original headers); a failure comes back as the result, never thrown. */
export async function forward(
  url: string,
  pairs: HeaderPairs,
  body: Uint8Array<ArrayBuffer>,
): Promise<ForwardResult> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: forwardHeaders(pairs),
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    await res.arrayBuffer().catch(() => {});
    return { url, status: res.status, error: null };
  } catch (e) {
    const cause = (e as { cause?: { code?: unknown } }).cause;
    const error =
      typeof cause?.code === "string"
        ? cause.code
        : (e as Error).name === "TimeoutError"
          ? "timeout"
          : (e as Error).message;
    return { url, status: null, error };
  }
}
