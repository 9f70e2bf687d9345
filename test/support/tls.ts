import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { inject } from "vitest";

const run = promisify(execFile);
/** A new P-256 key, unencrypted, for `openssl req`. */
const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/** A throwaway certificate authority and a server certificate it signed, as files and as PEM text. */
export interface TestTls {
  /** The temp directory holding every file below. */
  dir: string;
  caCertPath: string;
  /** PEM of the CA certificate: trust this (sender `ca` option, NODE_EXTRA_CA_CERTS, DENO_CERT). */
  caCert: string;
  certPath: string;
  /** PEM of the server certificate, valid for DNS:localhost, IP:127.0.0.1 and IP:::1. */
  cert: string;
  keyPath: string;
  /** PEM of the server's private key. */
  key: string;
}

/**
 * A test CA and a server certificate for localhost, generated with the openssl CLI into a temp dir
 * the first time a name is asked for, then cached for the process. Different names give
 * independent CAs: a receiver using `testTls("other")` is untrusted by a sender trusting
 * `testTls()`. The directory is removed when the test run ends.
 */
export function testTls(name = "default"): Promise<TestTls> {
  return serverTls(name);
}
const serverTls = oncePerName(generate);

/** `make` run once per name for the process; a failed run is forgotten, so the next ask tries again. */
function oncePerName<T>(make: (name: string) => Promise<T>): (name: string) => Promise<T> {
  const made = new Map<string, Promise<T>>();
  return (name) => {
    let pending = made.get(name);
    if (!pending) {
      pending = make(name);
      made.set(name, pending);
      pending.catch(() => made.delete(name));
    }
    return pending;
  };
}

/**
 * A fresh directory in the run's scratch directory, which global-setup.ts removes when the run ends (a
 * test worker is ended without its exit handlers, so it cannot), and an openssl CLI runner inside it.
 */
function workspace(prefix: string) {
  const dir = mkdtempSync(join(inject("scratchDir"), prefix));
  const p = (f: string) => join(dir, f);
  const openssl = async (...args: string[]) => {
    try {
      await run("openssl", args, { cwd: dir });
    } catch (e) {
      const err = e as Error & { stderr?: string };
      throw new Error(
        `openssl ${args[0]} failed (is the openssl CLI installed?): ${err.stderr ?? err.message}`,
      );
    }
  };
  /** A self-signed CA for `subject`: ca.key and ca.crt. */
  const ca = (subject: string) =>
    openssl(
      "req",
      "-x509",
      ...EC_KEY,
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
      "-days",
      "7",
      "-subj",
      subject,
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
    );
  /** `${file}.key` and `${file}.crt` for `subject`, signed by the CA with the extensions in `extfile`. */
  const signed = async (file: string, subject: string, extfile: string) => {
    await openssl("req", ...EC_KEY, "-keyout", `${file}.key`, "-out", `${file}.csr`, "-subj", subject);
    await openssl(
      "x509",
      "-req",
      "-in",
      `${file}.csr`,
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      `${file}.crt`,
      "-days",
      "7",
      "-extfile",
      extfile,
    );
  };
  return { dir, p, openssl, ca, signed };
}

async function generate(name: string): Promise<TestTls> {
  const { dir, p, ca, signed } = workspace(`herald-tls-${name}-`);
  await ca(`/CN=Herald Test CA ${name}`);
  writeFileSync(
    p("server.ext"),
    [
      "basicConstraints=critical,CA:FALSE",
      "keyUsage=critical,digitalSignature,keyEncipherment",
      "extendedKeyUsage=serverAuth",
      "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1",
      "subjectKeyIdentifier=hash",
      "authorityKeyIdentifier=keyid,issuer",
      "",
    ].join("\n"),
  );
  await signed("server", "/CN=localhost", "server.ext");
  return {
    dir,
    caCertPath: p("ca.crt"),
    caCert: readFileSync(p("ca.crt"), "utf8"),
    certPath: p("server.crt"),
    cert: readFileSync(p("server.crt"), "utf8"),
    keyPath: p("server.key"),
    key: readFileSync(p("server.key"), "utf8"),
  };
}

/** A client certificate and its key, as PEM text (generated at test time; test-only, never committed). */
export interface TestClientIdentity {
  cert: string;
  key: string;
}

/** A CA for client certificates and identities: signed by it, expired, self-signed, and an encrypted key. */
export interface TestClientTls {
  caCertPath: string;
  /** PEM of the CA that signs client certificates: a receiver requiring mutual TLS trusts this. */
  caCert: string;
  /** Two client certificates signed by the CA (CN=alice, CN=bob), clientAuth usage. */
  alice: TestClientIdentity;
  bob: TestClientIdentity;
  /** Signed by the CA, valid 2020-01-01 to 2020-01-02. */
  expired: TestClientIdentity;
  /** Self-signed (CN=mallory): a receiver trusting only the CA refuses it. */
  mallory: TestClientIdentity;
  /** alice's key, PKCS #8 encrypted with ENCRYPTED_KEY_PASSPHRASE. */
  aliceEncryptedKey: string;
}

export const ENCRYPTED_KEY_PASSPHRASE = "test-only passphrase";

/** A client CA and identities (see TestClientTls), generated with the openssl CLI once per name and process. */
export function testClientTls(name = "clients"): Promise<TestClientTls> {
  return clientTls(name);
}
const clientTls = oncePerName(generateClients);

async function generateClients(name: string): Promise<TestClientTls> {
  const { dir, p, openssl, ca, signed } = workspace(`herald-mtls-${name}-`);
  await ca(`/CN=Herald Test Client CA ${name}`);
  // With a key usage beside the extended one, as real client certificates have: Deno's
  // X509Certificate.keyUsage then gives the key usage bits, which the reader once took for the
  // extended key usage (issue 30).
  writeFileSync(
    p("client.ext"),
    "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n",
  );
  writeFileSync(
    p("ca.cnf"),
    [
      "[ca]",
      "default_ca = test",
      "[test]",
      `database = ${p("index.txt")}`,
      `new_certs_dir = ${dir}`,
      `serial = ${p("serial")}`,
      "default_md = sha256",
      "policy = any",
      "unique_subject = no",
      "[any]",
      "commonName = supplied",
      "",
    ].join("\n"),
  );
  writeFileSync(p("index.txt"), "");
  writeFileSync(p("serial"), "1000\n");
  await signed("alice", "/CN=alice", "client.ext");
  await signed("bob", "/CN=bob", "client.ext");
  await openssl("req", ...EC_KEY, "-keyout", "expired.key", "-out", "expired.csr", "-subj", "/CN=expired");
  await openssl(
    "ca",
    "-batch",
    "-config",
    "ca.cnf",
    "-cert",
    "ca.crt",
    "-keyfile",
    "ca.key",
    "-in",
    "expired.csr",
    "-out",
    "expired.crt",
    "-startdate",
    "20200101000000Z",
    "-enddate",
    "20200102000000Z",
    "-notext",
  );
  await openssl(
    "req",
    "-x509",
    ...EC_KEY,
    "-keyout",
    "mallory.key",
    "-out",
    "mallory.crt",
    "-days",
    "7",
    "-subj",
    "/CN=mallory",
  );
  await openssl(
    "pkcs8",
    "-topk8",
    "-in",
    "alice.key",
    "-out",
    "alice-encrypted.key",
    "-v2",
    "aes-256-cbc",
    "-passout",
    `pass:${ENCRYPTED_KEY_PASSPHRASE}`,
  );
  const read = (f: string) => readFileSync(p(f), "utf8");
  const identity = (cn: string) => ({ cert: read(`${cn}.crt`), key: read(`${cn}.key`) });
  return {
    caCertPath: p("ca.crt"),
    caCert: read("ca.crt"),
    alice: identity("alice"),
    bob: identity("bob"),
    expired: identity("expired"),
    mallory: identity("mallory"),
    aliceEncryptedKey: read("alice-encrypted.key"),
  };
}
