import { describe, expect, it } from "vitest";
import { endpointUrlIssues } from "../../src/domain/endpoint-url.ts";
import { classifyIpAddress } from "../../src/domain/ip-address.ts";

const strict = { allowHttp: false, allowPrivateNetworks: false };
const open = { allowHttp: false, allowPrivateNetworks: true };

describe("endpoint URLs naming a non-public IP literal", () => {
  it.each([
    ["https://127.0.0.1/x", "loopback"],
    ["https://127.0.0.1:8443/x", "loopback"],
    ["https://127.1/x", "loopback"], // short form, normalised by the URL parser
    ["https://0x7f.1/x", "loopback"], // hex
    ["https://0177.0.0.1/x", "loopback"], // octal
    ["https://2130706433/x", "loopback"], // one 32-bit number
    ["https://127.0.0.1./x", "loopback"], // trailing dot
    ["https://[::1]/x", "loopback"],
    ["https://[0:0:0:0:0:0:0:1]/x", "loopback"],
    ["https://[::ffff:127.0.0.1]/x", "loopback"], // IPv4-mapped, written dotted
    ["https://[::ffff:7f00:1]/x", "loopback"],
    ["https://0.0.0.0/x", "unspecified"],
    ["https://0/x", "unspecified"],
    ["https://[::]/x", "unspecified"],
    ["https://10.1.2.3/x", "private"],
    ["https://172.16.0.1/x", "private"],
    ["https://192.168.1.1/x", "private"],
    ["https://[fd12::1]/x", "private"],
    ["https://169.254.1.1/x", "link-local"],
    ["https://[fe80::1]/x", "link-local"],
    ["https://169.254.169.254/latest/meta-data", "cloud metadata"],
    ["https://0xa9fea9fe/latest/meta-data", "cloud metadata"],
    ["https://[::ffff:a9fe:a9fe]/", "cloud metadata"],
    ["https://[fd00:ec2::254]/", "cloud metadata"],
    ["https://100.64.0.1/x", "shared (CGNAT)"],
    ["https://224.0.0.1/x", "multicast"],
    ["https://[ff02::1]/x", "multicast"],
    ["https://255.255.255.255/x", "broadcast"],
    ["https://192.0.2.1/x", "reserved"],
    ["https://[2002:7f00:1::]/x", "loopback"], // 6to4 of 127.0.0.1
    ["https://[64:ff9b::a00:1]/x", "private"], // NAT64 of 10.0.0.1
  ])("refuses %s as %s", (url, kind) => {
    const issues = endpointUrlIssues(url, strict);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ path: "url" });
    expect(issues[0]!.message).toContain(`must not point at a ${kind} address`);
    // With HERALD_ALLOW_PRIVATE_NETWORKS=true the same URL is fine.
    expect(endpointUrlIssues(url, open)).toEqual([]);
  });

  it.each([
    "https://8.8.8.8/x",
    "https://[2606:4700:4700::1111]/x",
    "https://[::ffff:8.8.8.8]/x",
    "https://hooks.example.com/x",
    // Names are not resolved at registration; the senders check every resolved address at send time.
    "https://localhost/x",
    "https://metadata.google.internal/x",
  ])("accepts %s", (url) => {
    expect(endpointUrlIssues(url, strict)).toEqual([]);
  });
});

describe("classifyIpAddress", () => {
  it("names the kind of each literal, and null for a name", () => {
    expect(classifyIpAddress("127.0.0.1")).toBe("loopback");
    expect(classifyIpAddress("[::1]")).toBe("loopback");
    expect(classifyIpAddress("169.254.169.254")).toBe("cloud metadata");
    expect(classifyIpAddress("169.254.169.253")).toBe("link-local");
    expect(classifyIpAddress("100.100.100.100")).toBe("shared (CGNAT)");
    expect(classifyIpAddress("8.8.8.8")).toBe("public");
    expect(classifyIpAddress("fe80::1%eth0")).toBe("link-local");
    expect(classifyIpAddress("example.com")).toBeNull();
    expect(classifyIpAddress("0x7f.1")).toBeNull(); // not canonical: the URL parser normalises first
  });
});

describe("endpoint URL host names", () => {
  it("must fit DNS: at most 253 characters, labels of 1 to 63", () => {
    const long = `https://${"0".repeat(63)}.${Array(30).fill("a".repeat(63)).join(".")}/`;
    expect(endpointUrlIssues(long, strict)[0]?.message).toMatch(/at most 253 characters/);
    expect(endpointUrlIssues(`https://${"a".repeat(64)}.example.com/`, strict)).toHaveLength(1);
    expect(endpointUrlIssues("https://a..example.com/", strict)).toHaveLength(1);
    expect(endpointUrlIssues(`https://${"a".repeat(63)}.example.com./`, strict)).toEqual([]);
    const at253 = `${Array(3).fill("a".repeat(63)).join(".")}.${"b".repeat(61)}`;
    expect(at253).toHaveLength(253);
    expect(endpointUrlIssues(`https://${at253}/`, strict)).toEqual([]);
    expect(endpointUrlIssues(`https://${at253}x/`, strict)).toHaveLength(1);
  });
});
