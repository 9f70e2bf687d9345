import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

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

const cache = new Map<string, Promise<TestTls>>();
const dirs: string[] = [];
process.once("exit", () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * A test CA and a server certificate for localhost, generated with the openssl CLI into a temp dir
 * the first time a name is asked for, then cached for the process. Different names give
 * independent CAs: a receiver using `testTls("other")` is untrusted by a sender trusting
 * `testTls()`. The directory is removed when the process exits.
 */
export function testTls(name = "default"): Promise<TestTls> {
  let pending = cache.get(name);
  if (!pending) {
    pending = generate(name);
    cache.set(name, pending);
    pending.catch(() => cache.delete(name));
  }
  return pending;
}

async function generate(name: string): Promise<TestTls> {
  const dir = mkdtempSync(join(tmpdir(), `herald-tls-${name}-`));
  dirs.push(dir);
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
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

  await openssl(
    "req",
    "-x509",
    ...ec,
    "-keyout",
    p("ca.key"),
    "-out",
    p("ca.crt"),
    "-days",
    "7",
    "-subj",
    `/CN=Herald Test CA ${name}`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  );
  await openssl("req", ...ec, "-keyout", p("server.key"), "-out", p("server.csr"), "-subj", "/CN=localhost");
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
  await openssl(
    "x509",
    "-req",
    "-in",
    p("server.csr"),
    "-CA",
    p("ca.crt"),
    "-CAkey",
    p("ca.key"),
    "-CAcreateserial",
    "-out",
    p("server.crt"),
    "-days",
    "7",
    "-extfile",
    p("server.ext"),
  );
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
