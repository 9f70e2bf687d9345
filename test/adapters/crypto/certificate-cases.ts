import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { inject } from "vitest";
import type { ClientCertificateInput } from "../../../src/domain/client-certificate.ts";

// Certificates made with the openssl CLI in a temp dir, the way people make them (issue 30's recipe: an
// RSA CA, keyUsage and extendedKeyUsage), with the extended key usages and names whose reading differs
// by runtime. Shared by the reader's tests on Node and on Bun and Deno.
const run = promisify(execFile);

/** One input for the CertificateReader, named, with what it must answer: accepted, or the field refused and why. */
export interface CertificateCase extends ClientCertificateInput {
  name: string;
  expected: "accepted" | { field: string; message: string };
}

const NOT_CLIENT_AUTH = {
  field: "certificate",
  message:
    "is not for client authentication (its extended key usage lacks clientAuth, so receivers refuse it)",
};
const NOT_ITS_KEY = {
  field: "private_key",
  message: "does not belong to the certificate (the certificate's public key is another)",
};

/** A certificate case made by `mint`: its extensions (an openssl extfile) and subject. */
interface Minted {
  cert: string;
  key: string;
}

export interface CertificateCases {
  cases: CertificateCase[];
  /** The certificates alone, for what reads names and usages (the CA's included). */
  certificates: Record<string, string>;
}

const RSA = ["-newkey", "rsa:2048"];
const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
const ED25519 = ["-newkey", "ed25519"];
const KU = "keyUsage=digitalSignature,keyEncipherment";

/** Makes every case once per process (RSA keys take a moment). */
export const certificateCases = once(makeCases);

function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make();
    return made;
  };
}

async function makeCases(): Promise<CertificateCases> {
  // In the run's scratch directory, which global-setup.ts removes: a test worker is ended without its
  // exit handlers, so it cannot remove the directory itself.
  const dir = mkdtempSync(join(inject("scratchDir"), "herald-x509-"));
  const p = (f: string) => join(dir, f);
  const openssl = (...args: string[]) => run("openssl", args, { cwd: dir });
  const read = (f: string) => readFileSync(p(f), "utf8");
  // string_mask=default lets openssl choose T61String and BMPString for names beyond ASCII.
  writeFileSync(p("req.cnf"), "[req]\ndistinguished_name=dn\nstring_mask=default\n[dn]\n");
  await openssl(
    ...["req", "-x509", ...RSA, "-nodes", "-keyout", "ca.key", "-out", "ca.pem"],
    "-days",
    "2",
    "-subj",
    "/CN=test-ca",
  );

  let serial = 1;
  const mint = async (
    file: string,
    subject: string,
    extensions: string[] | null,
    keyArgs = RSA,
    days = "2",
  ): Promise<Minted> => {
    await openssl(
      ...["req", "-config", "req.cnf", "-utf8", ...keyArgs, "-nodes", "-keyout", `${file}.key`],
      ...["-out", `${file}.csr`, "-subj", subject],
    );
    const ext = extensions === null ? [] : ["-extfile", `${file}.cnf`];
    if (extensions !== null) writeFileSync(p(`${file}.cnf`), `${extensions.join("\n")}\n`);
    await openssl(
      ...["x509", "-req", "-in", `${file}.csr`, "-CA", "ca.pem", "-CAkey", "ca.key"],
      ...["-set_serial", String(serial++), "-out", `${file}.pem`, "-days", days, ...ext],
    );
    return { cert: read(`${file}.pem`), key: read(`${file}.key`) };
  };

  const issue = await mint("cli", "/CN=herald-cli/O=Test", [
    "basicConstraints=CA:FALSE",
    KU,
    "extendedKeyUsage=clientAuth",
  ]);
  const server = await mint("srv", "/CN=srv", [
    "basicConstraints=CA:FALSE",
    KU,
    "extendedKeyUsage=serverAuth",
  ]);
  const noEku = await mint("noeku", "/CN=no-eku", ["basicConstraints=CA:FALSE", "keyUsage=digitalSignature"]);
  // Without -extfile openssl writes a version 1 certificate: no extensions at all.
  const v1 = await mint("v1", "/CN=version-one", null, EC);
  const any = await mint("any", "/CN=any", ["extendedKeyUsage=anyExtendedKeyUsage"], EC);
  const both = await mint("both", "/CN=both", ["extendedKeyUsage=critical,serverAuth,clientAuth"], ED25519);
  const email = await mint(
    "email",
    "/CN=mail",
    ["keyUsage=critical,digitalSignature", "extendedKeyUsage=emailProtection"],
    EC,
  );
  const escaped = await mint(
    "escaped",
    '/CN=Zoë+serialNumber=1/O=A, B "Q" <x>; \\\\y=z/C=DE/emailAddress=x@y.z/OU=\\#/OU= /OU=#in',
    ["extendedKeyUsage=clientAuth"],
    EC,
  );
  // Deno prints these attributes otherwise (streetAddress) and cannot print T61String at all; the
  // validity ends after 2049, a GeneralizedTime.
  const names = await mint(
    "names",
    "/DC=org/DC=example/CN=Ünï/OU=a+OU=b/street=x/title=T/L=#lead /ST= sp/GN=Жук/businessCategory=c",
    ["extendedKeyUsage=clientAuth"],
    EC,
    "36500",
  );
  const otherRsa = await mint("other", "/CN=other", ["extendedKeyUsage=clientAuth"]);

  await openssl(
    ...["pkcs8", "-topk8", "-in", "cli.key", "-out", "cli-p8.key", "-v2", "aes-256-cbc"],
    "-passout",
    "pass:pw",
  );
  await openssl(
    "rsa",
    "-in",
    "cli.key",
    "-traditional",
    "-aes128",
    "-passout",
    "pass:pw",
    "-out",
    "cli-legacy.key",
  );
  await openssl("rsa", "-in", "cli.key", "-traditional", "-out", "cli-pkcs1.key");
  await openssl("ec", "-in", "any.key", "-out", "any-sec1.key");

  const c = (
    name: string,
    m: Minted,
    expected: CertificateCase["expected"],
    extra: Partial<ClientCertificateInput> = {},
  ): CertificateCase => ({ name, certificate: m.cert, privateKey: m.key, expected, ...extra });
  const ok = "accepted";
  return {
    cases: [
      c("clientAuth with key usage (issue 30)", issue, ok),
      c("serverAuth only", server, NOT_CLIENT_AUTH),
      // RFC 5280: no extendedKeyUsage extension puts no limit on the purposes (ADR 22).
      c("no extended key usage", noEku, ok),
      c("version 1, no extensions", v1, ok),
      c("anyExtendedKeyUsage, EC", any, ok),
      c("serverAuth and clientAuth, Ed25519", both, ok),
      c("emailProtection only", email, NOT_CLIENT_AUTH),
      c("escaped name", escaped, ok),
      c("names Deno prints otherwise", names, ok),
      c("the key of another RSA certificate", issue, NOT_ITS_KEY, { privateKey: otherRsa.key }),
      c("a key of another type", issue, NOT_ITS_KEY, { privateKey: any.key }),
      c("PKCS #8 encrypted key", issue, ok, { privateKey: read("cli-p8.key"), passphrase: "pw" }),
      c(
        "PKCS #8 encrypted key, wrong passphrase",
        issue,
        { field: "passphrase", message: "does not decrypt the private key" },
        { privateKey: read("cli-p8.key"), passphrase: "no" },
      ),
      c("legacy encrypted PKCS #1 key", issue, ok, { privateKey: read("cli-legacy.key"), passphrase: "pw" }),
      c("PKCS #1 key", issue, ok, { privateKey: read("cli-pkcs1.key") }),
      c("SEC 1 key", any, ok, { privateKey: read("any-sec1.key") }),
      c(
        "not DER",
        issue,
        { field: "certificate", message: "could not be read as an X.509 certificate" },
        { certificate: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n" },
      ),
    ],
    certificates: {
      ca: read("ca.pem"),
      issue: issue.cert,
      server: server.cert,
      noEku: noEku.cert,
      v1: v1.cert,
      any: any.cert,
      both: both.cert,
      email: email.cert,
      escaped: escaped.cert,
      names: names.cert,
    },
  };
}
