import { describe, expect, it } from "vitest";
import { children, oid, readDer, TAG, time } from "../../../src/adapters/crypto/der.ts";

const der = (...bytes: number[]) => Uint8Array.from(bytes);
const ascii = (tag: number, text: string) => readDer(der(tag, text.length, ...Buffer.from(text, "latin1")));

describe("readDer", () => {
  it("reads short and long lengths, and the children of a SEQUENCE", () => {
    const long = readDer(der(0x04, 0x81, 0x02, 7, 8));
    expect([long.tag, long.start, long.end]).toEqual([0x04, 3, 5]);
    const seq = readDer(der(0x30, 0x06, 0x02, 0x01, 0x05, 0x04, 0x01, 0x09));
    expect(children(seq).map((c) => [c.tag, c.bytes[c.start]])).toEqual([
      [TAG.integer, 5],
      [TAG.octetString, 9],
    ]);
  });

  it("throws on what DER certificates never hold and on lengths past the end", () => {
    for (const bytes of [
      der(0x30), // no length
      der(0x30, 0x80, 0x00, 0x00), // BER's indefinite length
      der(0x04, 0x85, 1, 0, 0, 0, 0), // a five-byte length
      der(0x04, 0x03, 1, 2), // past the end
      der(0x04, 0x82, 0x01), // the length's own bytes past the end
      der(0x1f, 0x81, 0x01, 0x00), // a multi-byte tag
    ])
      expect(() => readDer(bytes), String(bytes)).toThrow(/malformed DER/);
    expect(() => children(readDer(der(0x30, 0x03, 0x04, 0x05, 0x00)))).toThrow(/past the end/);
    expect(() => children(readDer(der(0x04, 0x00)))).toThrow(/primitive/);
  });
});

describe("oid", () => {
  it("decodes dotted OIDs, multi-byte arcs and the first byte's two arcs", () => {
    expect(oid(readDer(der(0x06, 0x03, 0x55, 0x1d, 0x25)))).toBe("2.5.29.37");
    expect(oid(readDer(der(0x06, 0x08, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x02)))).toBe(
      "1.3.6.1.5.5.7.3.2",
    );
    expect(oid(readDer(der(0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x01)))).toBe(
      "1.2.840.113549.1.9.1",
    );
    expect(oid(readDer(der(0x06, 0x03, 0x88, 0x37, 0x03)))).toBe("2.999.3");
  });

  it("throws on an empty or unterminated OID, or another tag", () => {
    expect(() => oid(readDer(der(0x06, 0x00)))).toThrow(/empty OID/);
    expect(() => oid(readDer(der(0x06, 0x02, 0x55, 0x81)))).toThrow(/unterminated/);
    expect(() => oid(readDer(der(0x04, 0x01, 0x55)))).toThrow(/tag/);
  });
});

describe("time", () => {
  it("reads UTCTime with RFC 5280's century rule, and GeneralizedTime", () => {
    expect(time(ascii(TAG.utcTime, "491231235959Z")).toISOString()).toBe("2049-12-31T23:59:59.000Z");
    expect(time(ascii(TAG.utcTime, "500101000000Z")).toISOString()).toBe("1950-01-01T00:00:00.000Z");
    expect(time(ascii(TAG.generalizedTime, "21261104020822Z")).toISOString()).toBe(
      "2126-11-04T02:08:22.000Z",
    );
  });

  it("throws on impossible dates, local times and other tags", () => {
    for (const [tag, text] of [
      [TAG.utcTime, "260230000000Z"],
      [TAG.utcTime, "261301000000Z"],
      [TAG.utcTime, "261128246000Z"],
      [TAG.utcTime, "2611280000Z"],
      [TAG.generalizedTime, "20261128000000"],
      [TAG.generalizedTime, "20261128000000+0100"],
      [TAG.printableString, "261128000000Z"],
    ] as const)
      expect(() => time(ascii(tag, text)), text).toThrow(/malformed DER/);
  });
});
