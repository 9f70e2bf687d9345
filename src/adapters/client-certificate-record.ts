import type { StoredClientCertificate } from "../domain/client-certificate.ts";

/**
 * A client certificate as both stores keep it (ADR 22): the PEM chain and its facts in clear, the key
 * sealed, under the same field names. Only its two times differ: a BSON date in MongoDB, ISO text inside
 * PostgreSQL's jsonb. A type rather than an interface: postgres.js takes it as JSON only so.
 */
export type ClientCertificateRecord<Time> = {
  certificate: string;
  sealed_key: string;
  subject: string;
  issuer: string;
  not_before: Time;
  not_after: Time;
  fingerprint: string;
};

/** The stored form of `c`, its times written by `time`. */
export function toCertificateRecord<Time>(
  c: StoredClientCertificate,
  time: (d: Date) => Time,
): ClientCertificateRecord<Time> {
  return {
    certificate: c.certificate,
    sealed_key: c.sealedKey,
    subject: c.subject,
    issuer: c.issuer,
    not_before: time(c.notBefore),
    not_after: time(c.notAfter),
    fingerprint: c.fingerprint,
  };
}

/** The certificate a stored record holds, its times read by `date`. */
export function fromCertificateRecord<Time>(
  r: ClientCertificateRecord<Time>,
  date: (t: Time) => Date,
): StoredClientCertificate {
  return {
    certificate: r.certificate,
    sealedKey: r.sealed_key,
    subject: r.subject,
    issuer: r.issuer,
    notBefore: date(r.not_before),
    notAfter: date(r.not_after),
    fingerprint: r.fingerprint,
  };
}
