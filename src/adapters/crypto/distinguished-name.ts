import { children, contents, type Der, oid, TAG } from "./der.ts";

// A certificate's subject or issuer printed as Node prints X509Certificate.subject (OpenSSL's
// X509_NAME_print_ex with RFC 2253 escaping, short names, one line per RDN), with the lines joined by
// ", ": the form Herald has always shown and stored. Read from the DER rather than the runtime's
// string, because Deno prints the same name otherwise (no escaping, its own attribute names) and
// throws on some string types (ADR 22).

/** OpenSSL's short names of the attributes seen in distinguished names; any other prints as its OID. */
const SHORT_NAMES: Record<string, string> = {
  "2.5.4.3": "CN",
  "2.5.4.4": "SN",
  "2.5.4.5": "serialNumber",
  "2.5.4.6": "C",
  "2.5.4.7": "L",
  "2.5.4.8": "ST",
  "2.5.4.9": "street",
  "2.5.4.10": "O",
  "2.5.4.11": "OU",
  "2.5.4.12": "title",
  "2.5.4.13": "description",
  "2.5.4.15": "businessCategory",
  "2.5.4.17": "postalCode",
  "2.5.4.18": "postOfficeBox",
  "2.5.4.41": "name",
  "2.5.4.42": "GN",
  "2.5.4.43": "initials",
  "2.5.4.44": "generationQualifier",
  "2.5.4.46": "dnQualifier",
  "2.5.4.65": "pseudonym",
  "2.5.4.72": "role",
  "2.5.4.97": "organizationIdentifier",
  "0.9.2342.19200300.100.1.1": "UID",
  "0.9.2342.19200300.100.1.25": "DC",
  "1.2.840.113549.1.9.1": "emailAddress",
  "1.2.840.113549.1.9.2": "unstructuredName",
  "1.3.6.1.4.1.311.60.2.1.1": "jurisdictionL",
  "1.3.6.1.4.1.311.60.2.1.2": "jurisdictionST",
  "1.3.6.1.4.1.311.60.2.1.3": "jurisdictionC",
};

/** Characters RFC 2253 escapes with a backslash anywhere in a value. */
const ALWAYS_ESCAPED = new Set([",", "+", '"', "\\", "<", ">", ";"]);

/** `name` (an X.501 Name: a SEQUENCE of SETs of type and value) printed as Node prints it. */
export function formatName(name: Der): string {
  if (name.tag !== TAG.sequence) throw new Error("malformed DER: a name is not a SEQUENCE");
  return children(name)
    .map((rdn) => {
      if (rdn.tag !== TAG.set) throw new Error("malformed DER: an RDN is not a SET");
      return children(rdn)
        .map((pair) => {
          const [type, value] = children(pair);
          if (!type || !value) throw new Error("malformed DER: an attribute without a value");
          const id = oid(type);
          return `${SHORT_NAMES[id] ?? id}=${escapeRfc2253(decode(value))}`;
        })
        .join(" + ");
    })
    .join(", ");
}

/** A value's characters as OpenSSL reads its string type: UTF-8, UTF-16, UTF-32, else one byte each. */
function decode(value: Der): string {
  const b = contents(value);
  if (value.tag === TAG.utf8String) return new TextDecoder("utf-8", { fatal: true }).decode(b);
  const units = (width: number) => {
    if (b.length % width !== 0) throw new Error("malformed DER: a wide string of odd length");
    const out: number[] = [];
    for (let i = 0; i < b.length; i += width) {
      let c = 0;
      for (let j = 0; j < width; j++) c = c * 256 + (b[i + j] as number);
      out.push(c);
    }
    return out;
  };
  if (value.tag === TAG.bmpString) return String.fromCharCode(...units(2));
  if (value.tag === TAG.universalString) return String.fromCodePoint(...units(4));
  return String.fromCharCode(...b);
}

/**
 * RFC 2253 escaping as OpenSSL does it: the special characters, a leading "#" or space and a trailing
 * space with a backslash (a one-character value counts only as trailing), control characters as \XX;
 * characters beyond ASCII as they are.
 */
function escapeRfc2253(text: string): string {
  const chars = [...text];
  return chars
    .map((ch, i) => {
      const c = ch.codePointAt(0) as number;
      const last = i === chars.length - 1;
      const first = i === 0 && !last;
      if (c > 0x7f) return ch;
      if (ALWAYS_ESCAPED.has(ch) || (first && (ch === "#" || ch === " ")) || (last && ch === " "))
        return `\\${ch}`;
      if (c < 0x20 || c === 0x7f) return `\\${c.toString(16).toUpperCase().padStart(2, "0")}`;
      return ch;
    })
    .join("");
}
