import { describe, expect, it } from "vitest";
import { classifyFailure } from "../../../src/adapters/delivery/classify.ts";
import { BlockedAddressError } from "../../../src/adapters/delivery/guarded-lookup.ts";
import { BodyPrefix, responseOutcome } from "../../../src/adapters/delivery/outcome.ts";

const err = (code: string, message = code, extra: object = {}) =>
  Object.assign(new Error(message), { code }, extra);

describe("classifyFailure", () => {
  it.each([
    [err("ECONNREFUSED"), "connection_error"],
    [
      err("ECONNRESET", "Client network socket disconnected before secure TLS connection was established"),
      "connection_error",
    ],
    [err("UND_ERR_SOCKET", "other side closed"), "connection_error"],
    [err("ENOTFOUND"), "dns_error"],
    [err("EAI_AGAIN"), "dns_error"],
    [err("UNABLE_TO_VERIFY_LEAF_SIGNATURE"), "tls_error"],
    [err("DEPTH_ZERO_SELF_SIGNED_CERT"), "tls_error"],
    [err("CERT_HAS_EXPIRED"), "tls_error"],
    [err("ERR_TLS_CERT_ALTNAME_INVALID"), "tls_error"],
    [err("ERR_SSL_WRONG_VERSION_NUMBER"), "tls_error"],
    [err("UND_ERR_CONNECT_TIMEOUT"), "timeout"],
    [err("UND_ERR_HEADERS_TIMEOUT"), "timeout"],
    [new DOMException("t", "TimeoutError"), "timeout"],
    [new BlockedAddressError("h", "10.0.0.1"), "blocked_address"],
    [new TypeError("fetch failed", { cause: err("ECONNREFUSED") }), "connection_error"],
    [new TypeError("fetch failed", { cause: new BlockedAddressError("h", "::1") }), "blocked_address"],
    [new AggregateError([err("ECONNREFUSED"), err("ECONNREFUSED")]), "connection_error"],
    [new TypeError("error sending request: invalid peer certificate: UnknownIssuer"), "tls_error"],
    [new TypeError("error sending request: dns error: failed to lookup address information"), "dns_error"],
    [new Error("something else entirely"), "connection_error"],
    ["not even an error", "connection_error"],
  ])("%s → %s", (e, expected) => {
    expect(classifyFailure(e)).toBe(expected);
  });
});

describe("BodyPrefix", () => {
  it("keeps at most the limit across chunks and says when to stop", () => {
    const b = new BodyPrefix(8);
    expect(b.push(new TextEncoder().encode("abc"))).toBe(false);
    expect(b.push(new TextEncoder().encode("defghijk"))).toBe(true);
    expect(b.text()).toBe("abcdefgh");
    expect(b.truncated).toBe(true);
  });

  it("drops a multi-byte character cut at the limit", () => {
    const b = new BodyPrefix(4);
    b.push(new TextEncoder().encode("abc€"));
    expect(b.text()).toBe("abc");
  });
});

describe("responseOutcome", () => {
  const base = { retryAfter: null, body: "", durationMs: 5, now: new Date("2026-01-01T00:00:00Z") };
  it("maps statuses to ok, redirect and http_status", () => {
    expect(responseOutcome({ ...base, status: 200 })).toMatchObject({ ok: true, error: null });
    expect(responseOutcome({ ...base, status: 299 })).toMatchObject({ ok: true, error: null });
    expect(responseOutcome({ ...base, status: 301 })).toMatchObject({ ok: false, error: "redirect" });
    expect(responseOutcome({ ...base, status: 304 })).toMatchObject({ ok: false, error: "redirect" });
    expect(responseOutcome({ ...base, status: 404 })).toMatchObject({ ok: false, error: "http_status" });
  });

  it("reads Retry-After only on 429 and 503", () => {
    expect(responseOutcome({ ...base, status: 503, retryAfter: "7" }).retryAfterMs).toBe(7_000);
    expect(
      responseOutcome({ ...base, status: 429, retryAfter: "Thu, 01 Jan 2026 00:01:00 GMT" }).retryAfterMs,
    ).toBe(60_000);
    expect(responseOutcome({ ...base, status: 500, retryAfter: "7" }).retryAfterMs).toBeNull();
    expect(responseOutcome({ ...base, status: 429, retryAfter: "soon" }).retryAfterMs).toBeNull();
  });
});
