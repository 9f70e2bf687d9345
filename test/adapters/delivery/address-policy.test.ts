import { describe, expect, it } from "vitest";
import { isBlockedAddress, isIpLiteral, parseIPv6 } from "../../../src/adapters/delivery/address-policy.ts";

describe("isBlockedAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback /8"],
    ["10.0.0.1", "private 10/8"],
    ["10.255.255.255", "private 10/8 end"],
    ["172.16.0.1", "private 172.16/12 start"],
    ["172.31.255.255", "private 172.16/12 end"],
    ["192.168.1.1", "private 192.168/16"],
    ["169.254.0.1", "link-local"],
    ["169.254.169.254", "cloud metadata"],
    ["100.64.0.1", "CGNAT start"],
    ["100.127.255.255", "CGNAT end"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast SSDP"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "this network 0/8"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved 240/4"],
    ["192.0.2.10", "documentation"],
    ["198.18.0.1", "benchmarking"],
    ["::", "IPv6 unspecified"],
    ["::1", "IPv6 loopback"],
    ["0:0:0:0:0:0:0:1", "IPv6 loopback uncompressed"],
    ["fe80::1", "IPv6 link-local"],
    ["fe80::1%eth0", "IPv6 link-local with zone"],
    ["febf:ffff::1", "IPv6 link-local /10 end"],
    ["fc00::1", "IPv6 ULA fc"],
    ["fd12:3456::1", "IPv6 ULA fd"],
    ["fd00:ec2::254", "EC2 IPv6 metadata"],
    ["ff02::1", "IPv6 multicast"],
    ["ff0e::1", "IPv6 global multicast"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:7f00:1", "IPv4-mapped loopback, hex"],
    ["::ffff:10.1.2.3", "IPv4-mapped private"],
    ["::ffff:a9fe:a9fe", "IPv4-mapped metadata, hex"],
    ["0:0:0:0:0:ffff:c0a8:101", "IPv4-mapped 192.168.1.1, uncompressed"],
    ["::127.0.0.1", "IPv4-compatible loopback"],
    ["::8.8.8.8", "IPv4-compatible (deprecated) even with a public address"],
    ["64:ff9b::127.0.0.1", "NAT64 to loopback"],
    ["64:ff9b::a00:1", "NAT64 to 10.0.0.1, hex"],
    ["64:ff9b:1::1", "local-use NAT64"],
    ["2002:7f00:1::", "6to4 of 127.0.0.1"],
    ["2002:c0a8:0101::1", "6to4 of 192.168.1.1"],
    ["2001:db8::1", "IPv6 documentation"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"],
    ["[::1]", "bracketed IPv6 loopback (URL hostname form)"],
  ])("refuses %s (%s)", (ip) => {
    expect(isBlockedAddress(ip)).toBe(true);
  });

  it.each([
    ["8.8.8.8"],
    ["1.1.1.1"],
    ["93.184.216.34"],
    ["172.15.255.255"],
    ["172.32.0.1"],
    ["100.63.255.255"],
    ["100.128.0.1"],
    ["169.253.255.255"],
    ["223.255.255.255"],
    ["11.0.0.1"],
    ["2606:4700:4700::1111"],
    ["2a00:1450:4001:80b::200e"],
    ["::ffff:8.8.8.8"],
    ["::ffff:808:808"],
    ["64:ff9b::8.8.8.8"],
    ["2002:808:808::1"],
    ["[2606:4700:4700::1111]"],
  ])("allows public %s", (ip) => {
    expect(isBlockedAddress(ip)).toBe(false);
  });

  it.each([
    ["localhost"],
    ["example.com"],
    [""],
    ["1.2.3"],
    ["01.2.3.4"],
    ["256.1.1.1"],
    ["1::2::3"],
    ["12345::1"],
  ])("fails closed on %j, which is not an IP address", (text) => {
    expect(isBlockedAddress(text)).toBe(true);
  });
});

describe("parseIPv6", () => {
  it("expands compression and an embedded IPv4 tail", () => {
    expect(parseIPv6("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(parseIPv6("1:2:3:4:5:6:7.8.9.10")).toEqual([1, 2, 3, 4, 5, 6, 0x0708, 0x090a]);
    expect(parseIPv6("2001:db8::")).toEqual([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6("1:2:3:4:5:6:7:8")).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("rejects malformed text", () => {
    for (const bad of [
      "1:2:3:4:5:6:7",
      "1:2:3:4:5:6:7:8:9",
      ":1::",
      "1::2:",
      "g::1",
      "::1.2.3",
      "1:2:3:4:5:6:7::8",
    ]) {
      expect(parseIPv6(bad), bad).toBeNull();
    }
  });
});

describe("isIpLiteral", () => {
  it("tells literal addresses from names", () => {
    expect(isIpLiteral("127.0.0.1")).toBe(true);
    expect(isIpLiteral("[::1]")).toBe(true);
    expect(isIpLiteral("localhost")).toBe(false);
    expect(isIpLiteral("hooks.example.com")).toBe(false);
  });
});
