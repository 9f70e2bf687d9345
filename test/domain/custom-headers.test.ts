import { describe, expect, it } from "vitest";
import {
  HEADER_VALUE_MASK,
  headerInputIssues,
  headerSetIssues,
  isReservedHeaderName,
  MAX_CUSTOM_HEADERS,
  maskedHeaders,
  mergeHeaders,
} from "../../src/domain/custom-headers.ts";

const SECRET_VALUE = "sk_live_51Hz-very-secret";

describe("custom header rules", () => {
  it("accepts RFC 7230 token names and printable ASCII values", () => {
    expect(
      headerInputIssues({
        Authorization: `Bearer ${SECRET_VALUE}`,
        "X-Api-Key": SECRET_VALUE,
        "x-route!#$%&'*+.^_`|~9": "a b\tc",
        "X-Removed": null,
      }),
    ).toEqual([]);
  });

  it("refuses Herald's own, Standard Webhooks', trace context, hop-by-hop and framing headers and Host, in any case", () => {
    const reserved = [
      "X-Webhook-Id",
      "x-webhook-signature",
      "X-WEBHOOK-ANYTHING",
      "webhook-id",
      "Webhook-Timestamp",
      "webhook-signature",
      "User-Agent",
      "Content-Type",
      "content-length",
      "Content-Encoding",
      "Connection",
      "Keep-Alive",
      "Transfer-Encoding",
      "TE",
      "Trailer",
      "Upgrade",
      "Proxy-Authorization",
      "proxy-connection",
      "Host",
      "Expect",
      "traceparent",
      "Tracestate",
    ];
    for (const name of reserved) {
      expect(isReservedHeaderName(name), name).toBe(true);
      const issues = headerInputIssues({ [name]: "x" });
      expect(
        issues.map((i) => i.path),
        name,
      ).toEqual([`headers.${name}`]);
      expect(issues[0]!.message).toMatch(/^is set by Herald or reserved by HTTP/);
    }
    for (const name of ["Authorization", "X-Webhook", "Webhook", "X-Proxy", "Hosts", "Content"]) {
      expect(isReservedHeaderName(name), name).toBe(false);
    }
  });

  it("refuses names that are not tokens or too long, and names repeated in another case", () => {
    const long = `X-${"a".repeat(127)}`;
    const issues = headerInputIssues({
      "X Space": "v",
      "X:Colon": "v",
      "": "v",
      "X-é": "v",
      [long]: "v",
      "X-Dup": "1",
      "x-dup": "2",
    });
    expect(issues.map((i) => i.path).sort()).toEqual(
      [
        "headers.",
        "headers.X Space",
        "headers.X-é",
        "headers.X:Colon",
        `headers.${long}`,
        "headers.x-dup",
      ].sort(),
    );
    expect(issues.find((i) => i.path === "headers.x-dup")!.message).toBe(
      "repeats X-Dup: header names do not differ by case",
    );
  });

  it("refuses empty, long, multi-line, non-ASCII, padded and masked values without quoting them", () => {
    const bad = {
      "X-Empty": "",
      "X-Long": "v".repeat(4097),
      "X-Crlf": `${SECRET_VALUE}\r\nX-Injected: 1`,
      "X-Nul": `${SECRET_VALUE}\u0000`,
      "X-Latin": `${SECRET_VALUE}é`,
      "X-Padded": ` ${SECRET_VALUE}`,
      "X-Mask": HEADER_VALUE_MASK,
    };
    const issues = headerInputIssues(bad);
    expect(issues.map((i) => i.path).sort()).toEqual(
      Object.keys(bad)
        .map((k) => `headers.${k}`)
        .sort(),
    );
    expect(JSON.stringify(issues)).not.toContain(SECRET_VALUE.slice(3));
    expect(headerInputIssues({ "X-Max": "v".repeat(4096) })).toEqual([]);
  });

  it("limits a whole set to 20 headers and 8192 characters of names and values", () => {
    const many = Array.from({ length: MAX_CUSTOM_HEADERS + 1 }, (_, i) => ({ name: `X-${i}`, value: "v" }));
    expect(headerSetIssues(many)).toEqual([{ path: "headers", message: "must hold at most 20 headers" }]);
    expect(headerSetIssues(many.slice(1))).toEqual([]);
    const big = [
      { name: "X-A", value: "a".repeat(4096) },
      { name: "X-B", value: "b".repeat(4090) },
    ];
    expect(headerSetIssues(big)).toEqual([]); // 8192 exactly
    expect(headerSetIssues([...big, { name: "C", value: "c" }])[0]!.path).toBe("headers");
  });

  it("merges a change as a JSON merge patch: set, replace in any case, remove, keep; null clears", () => {
    const current = [
      { name: "X-A", value: "1" },
      { name: "X-B", value: "2" },
      { name: "X-C", value: "3" },
    ];
    expect(mergeHeaders(current, { "x-a": "one", "X-B": null, "X-D": "4" })).toEqual([
      { name: "x-a", value: "one" },
      { name: "X-C", value: "3" },
      { name: "X-D", value: "4" },
    ]);
    expect(mergeHeaders(current, {})).toEqual(current);
    expect(mergeHeaders(current, { "X-Absent": null })).toEqual(current);
    expect(mergeHeaders(current, null)).toEqual([]);
    expect(current[0]).toEqual({ name: "X-A", value: "1" });
  });

  it("masks every value with the same fixed text", () => {
    expect(HEADER_VALUE_MASK).toBe("********");
    expect(maskedHeaders([{ name: "X-A" }, { name: "Authorization" }])).toEqual({
      "X-A": "********",
      Authorization: "********",
    });
  });
});
