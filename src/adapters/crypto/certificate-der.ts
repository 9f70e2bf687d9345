import { children, contents, type Der, oid, readDer, TAG, time } from "./der.ts";
import { formatName } from "./distinguished-name.ts";

// What Herald reads of a certificate, from its DER (X.509, RFC 5280 section 4.1) rather than from
// X509Certificate's getters, whose shapes differ by runtime: `keyUsage` is the extended key usage on
// Node and Bun but the key usage bits on Deno; Deno prints names otherwise and throws on some (ADR 22).

const EXTENDED_KEY_USAGE = "2.5.29.37";
/** The context-specific tags of TBSCertificate's optional fields. */
const VERSION = 0xa0;
const EXTENSIONS = 0xa3;

export interface CertificateFields {
  subject: string;
  issuer: string;
  notBefore: Date;
  notAfter: Date;
  /** The extended key usage's purposes (OIDs), or null when the certificate has no such extension. */
  extendedKeyUsage: string[] | null;
}

/** The fields of a DER certificate; throws on a structure it cannot read. */
export function certificateFields(der: Uint8Array): CertificateFields {
  const certificate = readDer(der);
  if (certificate.tag !== TAG.sequence || certificate.end !== der.length)
    throw new Error("malformed DER: not one certificate");
  const tbs = children(certificate)[0];
  if (tbs?.tag !== TAG.sequence) throw new Error("malformed DER: no TBSCertificate");
  const fields = children(tbs);
  // version [0] is absent on v1 certificates; then serialNumber, signature, issuer, validity, subject.
  const at = fields[0]?.tag === VERSION ? 1 : 0;
  const [issuer, validity, subject] = [fields[at + 2], fields[at + 3], fields[at + 4]];
  if (!issuer || !subject || validity?.tag !== TAG.sequence)
    throw new Error("malformed DER: TBSCertificate too short");
  const [notBefore, notAfter] = children(validity);
  if (!notBefore || !notAfter) throw new Error("malformed DER: validity without two times");
  const extensions = fields.slice(at + 6).find((f) => f.tag === EXTENSIONS);
  return {
    subject: formatName(subject),
    issuer: formatName(issuer),
    notBefore: time(notBefore),
    notAfter: time(notAfter),
    extendedKeyUsage: extendedKeyUsage(extensions),
  };
}

/** The purposes in the extendedKeyUsage extension (RFC 5280 4.2.1.12), if there is one. */
function extendedKeyUsage(extensions: Der | undefined): string[] | null {
  if (!extensions) return null;
  const [list] = children(extensions);
  if (list?.tag !== TAG.sequence) throw new Error("malformed DER: extensions are not a SEQUENCE");
  for (const extension of children(list)) {
    const parts = children(extension);
    if (!parts[0] || oid(parts[0]) !== EXTENDED_KEY_USAGE) continue;
    // extnID, critical (BOOLEAN, absent when false), extnValue: an OCTET STRING wrapping the DER.
    const value = contents(parts.at(-1) as Der, TAG.octetString);
    const purposes = readDer(value);
    if (purposes.tag !== TAG.sequence || purposes.end !== value.length)
      throw new Error("malformed DER: extendedKeyUsage is not one SEQUENCE");
    return children(purposes).map(oid);
  }
  return null;
}
