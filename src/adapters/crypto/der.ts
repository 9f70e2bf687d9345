// A reader of DER (the X.690 encoding certificates use), only as far as a certificate's names, validity
// and extensions need: definite lengths, tags below 31. Anything else throws, and the caller answers a
// 422 (ADR 22). It reads the certificate the runtime has already parsed (X509Certificate.raw).

/** One element: its tag byte and where its contents lie in the buffer. */
export interface Der {
  tag: number;
  bytes: Uint8Array;
  start: number;
  end: number;
}

export const TAG = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  oid: 0x06,
  utf8String: 0x0c,
  printableString: 0x13,
  t61String: 0x14,
  ia5String: 0x16,
  utcTime: 0x17,
  generalizedTime: 0x18,
  universalString: 0x1c,
  bmpString: 0x1e,
  sequence: 0x30,
  set: 0x31,
} as const;

function fail(what: string): never {
  throw new Error(`malformed DER: ${what}`);
}

/** The element at `offset` of `bytes`, which must end by `limit`. */
export function readDer(bytes: Uint8Array, offset = 0, limit = bytes.length): Der {
  if (offset + 2 > limit) fail("truncated header");
  const tag = bytes[offset] as number;
  if ((tag & 0x1f) === 0x1f) fail("multi-byte tag");
  let length = bytes[offset + 1] as number;
  let start = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    // 0 is BER's indefinite length; four bytes already exceed any certificate.
    if (count === 0 || count > 4 || start + count > limit) fail("bad length");
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (bytes[start + i] as number);
    start += count;
  }
  const end = start + length;
  if (end > limit) fail("length past the end");
  return { tag, bytes, start, end };
}

/** The elements inside a constructed one, in order. */
export function children(parent: Der): Der[] {
  if ((parent.tag & 0x20) === 0) fail("children of a primitive element");
  const out: Der[] = [];
  for (let at = parent.start; at < parent.end; ) {
    const child = readDer(parent.bytes, at, parent.end);
    out.push(child);
    at = child.end;
  }
  return out;
}

/** `der`'s contents, checking its tag. */
export function contents(der: Der, tag?: number): Uint8Array {
  if (tag !== undefined && der.tag !== tag) fail(`tag 0x${der.tag.toString(16)} where 0x${tag.toString(16)}`);
  return der.bytes.subarray(der.start, der.end);
}

/** An OBJECT IDENTIFIER in dotted form. */
export function oid(der: Der): string {
  const b = contents(der, TAG.oid);
  if (b.length === 0) fail("empty OID");
  const arcs: number[] = [];
  let value = 0;
  for (const byte of b) {
    value = value * 128 + (byte & 0x7f);
    if (value > Number.MAX_SAFE_INTEGER / 128) fail("OID arc too large");
    if ((byte & 0x80) === 0) {
      arcs.push(value);
      value = 0;
    }
  }
  if ((b[b.length - 1] as number) & 0x80) fail("unterminated OID");
  const first = arcs.shift() as number;
  const head = first < 80 ? [Math.floor(first / 40), first % 40] : [2, first - 80];
  return [...head, ...arcs].join(".");
}

/** A UTCTime (years 1950-2049) or GeneralizedTime, as X.509 requires them (UTC, "Z"). */
export function time(der: Der): Date {
  const text = new TextDecoder().decode(contents(der));
  const utc = der.tag === TAG.utcTime;
  const m = (
    utc
      ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/
      : /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.\d+)?Z$/
  ).exec(text);
  if (!m || (der.tag !== TAG.utcTime && der.tag !== TAG.generalizedTime)) fail("bad time");
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as number[];
  const fullYear = utc ? (year as number) + ((year as number) < 50 ? 2000 : 1900) : (year as number);
  const date = new Date(0);
  date.setUTCFullYear(fullYear, (month as number) - 1, day);
  date.setUTCHours(hour as number, minute, second, 0);
  if (
    date.getUTCDate() !== day ||
    date.getUTCMonth() !== (month as number) - 1 ||
    (hour as number) > 23 ||
    (minute as number) > 59 ||
    (second as number) > 59
  )
    fail("bad date");
  return date;
}
