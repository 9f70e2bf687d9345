import { describe, expect, it } from "vitest";
import { bypassesProxy, parseEgressProxy, parseNoProxy } from "../../src/domain/egress-proxy.ts";

describe("parseEgressProxy", () => {
  it("reads host, port and credentials, and shows the proxy without them", () => {
    expect(parseEgressProxy("http://127.0.0.1:3128")).toEqual({
      host: "127.0.0.1",
      port: 3128,
      authorization: null,
      display: "http://127.0.0.1:3128",
    });
    const p = parseEgressProxy(" http://user%3Aname:p%C3%A4ss%20word@Proxy.Internal/ ");
    expect(p).toMatchObject({ host: "proxy.internal", port: 80, display: "http://proxy.internal" });
    expect(p.authorization).toBe(`Basic ${Buffer.from("user:name:päss word").toString("base64")}`);
    expect(parseEgressProxy("http://[::1]:8080")).toMatchObject({ host: "::1", port: 8080 });
    expect(parseEgressProxy("http://only-user@proxy:1").authorization).toBe(
      `Basic ${Buffer.from("only-user:").toString("base64")}`,
    );
  });
});

describe("parseNoProxy and bypassesProxy (curl's NO_PROXY)", () => {
  const rules = parseNoProxy("Example.com, .internal.test  10.0.0.0/8,192.0.2.7 fd00::/8,[::1]");

  it.each([
    ["example.com", true],
    ["api.example.com", true],
    ["EXAMPLE.COM.", true],
    ["notexample.com", false],
    ["example.com.evil.test", false],
    ["internal.test", true],
    ["a.b.internal.test", true],
    ["10.20.30.40", true],
    ["11.0.0.1", false],
    ["192.0.2.7", true],
    ["192.0.2.8", false],
    ["[fd12::1]", true],
    ["fe80::1", false],
    ["[::1]", true],
    ["other.test", false],
  ])("%s bypasses: %s", (host, expected) => {
    expect(bypassesProxy(rules, host)).toBe(expected);
  });

  it("matches IP ranges only against IP-literal hosts, never a name that looks like one", () => {
    expect(bypassesProxy(parseNoProxy("10.0.0.0/8"), "10.example.com")).toBe(false);
  });

  it("* sends everything direct; an empty list nothing", () => {
    expect(bypassesProxy(parseNoProxy("*"), "anything.test")).toBe(true);
    expect(bypassesProxy(parseNoProxy(""), "anything.test")).toBe(false);
    expect(bypassesProxy(parseNoProxy(" , "), "anything.test")).toBe(false);
    expect(bypassesProxy(parseNoProxy("0.0.0.0/0"), "203.0.113.5")).toBe(true);
  });
});
