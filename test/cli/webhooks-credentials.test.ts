import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Webhook, WebhookWithSecret } from "../../clients/typescript/client.ts";
import { unwrap } from "../../clients/typescript/client.ts";
import { ENCRYPTED_KEY_PASSPHRASE, testClientTls } from "../support/tls.ts";
import { cliHarness, receiverUrl } from "./helpers.ts";
import { created, getWebhook, SECRET } from "./webhooks-support.ts";

// `herald webhooks` credentials: custom headers, secret rotation, signature schemes, client certificates.

describe("herald webhooks", () => {
  it("create --header (repeatable) and --signature-scheme; values never printed, masked from then on", async () => {
    const cli = await cliHarness();
    const value = "cli-value-5b2e";
    const run = await cli.run([
      "webhooks",
      "create",
      "--url",
      receiverUrl(),
      "--events",
      "message.delivered",
      "--header",
      `Authorization=Bearer ${value}`,
      "--header",
      "X-Query=a=b",
      "--signature-scheme",
      "standard-webhooks",
    ]);
    expect(run.code).toBe(0);
    expect(run.err).toEqual([]);
    expect(run.stdout).toMatch(/^signature scheme +standard-webhooks$/m);
    expect(run.stdout).toMatch(/^headers +Authorization: \*{8}, X-Query: \*{8}$/m);
    expect(run.stdout).not.toContain(value);
    const [w] = (await unwrap(cli.client.GET("/api/v1/webhooks"))).data;
    expect(w).toMatchObject({
      signature_scheme: "standard-webhooks",
      headers: { Authorization: "********", "X-Query": "********" },
    });
    const json = await cli.run(["webhooks", "get", w!.id, "--json"]);
    expect(json.json()).toEqual(await getWebhook(cli, w!.id));
    expect(json.stdout).not.toContain(value);
    const plain = await cli.run(["webhooks", "create", "--url", receiverUrl(), "--events", "message.sent"]);
    expect(plain.stdout).toMatch(/^signature scheme +herald-v1$/m);
    expect(plain.stdout).toMatch(/^headers +-$/m);
  });

  it("update --header sets, --remove-header removes, others stay; --signature-scheme switches", async () => {
    const cli = await cliHarness();
    const w = await created(cli);
    const set = await cli.run([
      "webhooks",
      "update",
      w.id,
      "--header",
      "X-A=1",
      "--header",
      "X-B=2",
      "--json",
    ]);
    expect(set.code).toBe(0);
    expect(set.json<{ headers: object }>().headers).toEqual({ "X-A": "********", "X-B": "********" });
    const run = await cli.run([
      "webhooks",
      "update",
      w.id,
      "--header",
      "X-C=3",
      "--remove-header",
      "x-a",
      "--signature-scheme",
      "standard-webhooks",
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^headers +X-B: \*{8}, X-C: \*{8}$/m);
    expect(await getWebhook(cli, w.id)).toMatchObject({
      headers: { "X-B": "********", "X-C": "********" },
      signature_scheme: "standard-webhooks",
    });
  });

  it("refuses a malformed --header or --signature-scheme without quoting a value, and shows the API's 422", async () => {
    const cli = await cliHarness();
    const secretish = "do-not-echo-91c";
    for (const args of [
      ["--header", secretish],
      ["--header", `=${secretish}`],
      ["--header", `X-A=${secretish}`, "--header", `X-A=${secretish}`],
      ["--signature-scheme", "herald-v2"],
    ]) {
      const run = await cli.run([
        "webhooks",
        "create",
        "--url",
        receiverUrl(),
        "--events",
        "message.sent",
        ...args,
      ]);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.err).toHaveLength(1);
      expect(run.err.join("\n")).not.toContain(secretish);
    }
    const refused = await cli.run([
      "webhooks",
      "create",
      "--url",
      receiverUrl(),
      "--events",
      "message.sent",
      "--header",
      `Host=${secretish}`,
    ]);
    expect(refused.code).toBe(1);
    expect(refused.err.join("\n")).toContain("body.headers.Host");
    expect(refused.err.join("\n")).not.toContain(secretish);
    const w = await created(cli);
    const both = await cli.run(["webhooks", "update", w.id, "--header", "X-A=1", "--remove-header", "x-a"]);
    expect(both.code).toBe(2);
  });

  it("rotate prints a new secret once; --grace takes a duration", async () => {
    const cli = await cliHarness();
    const w = await created(cli);
    const run = await cli.run(["webhooks", "rotate", w.id, "--grace", "1h"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("keeps signing too until");
    const [secret] = run.stdout.match(SECRET) ?? [];
    expect(secret).toBeDefined();
    expect(secret).not.toBe(w.secret);
    const json = await cli.run(["webhooks", "rotate", w.id, "--json"]);
    const rotated = json.json<WebhookWithSecret>();
    expect(rotated.secret).toMatch(SECRET);
    expect(new Set([w.secret, secret, rotated.secret]).size).toBe(3);
    const tooLong = await cli.run(["webhooks", "rotate", w.id, "--grace", "8d"]);
    expect(tooLong.code).toBe(1);
    expect(tooLong.err).toHaveLength(1);
    expect(tooLong.err[0]).toMatch(/^herald: 422 validation_failed: .*body\.grace_period_seconds: /);
    const bad = await cli.run(["webhooks", "rotate", w.id, "--grace", "soon"]);
    expect(bad.code).toBe(2);
  });

  it("--signature-scheme standard-webhooks-ed25519 prints the public key, never a private key; update across kinds prints the new key", async () => {
    const cli = await cliHarness();
    const PUBLIC = /whpk_[A-Za-z0-9+/]{43}=/;
    const run = await cli.run([
      "webhooks",
      "create",
      "--url",
      receiverUrl(),
      "--events",
      "message.delivered",
      "--signature-scheme",
      "standard-webhooks-ed25519",
    ]);
    expect(run.code).toBe(0);
    const { data } = await unwrap(cli.client.GET("/api/v1/webhooks"));
    const w = data[0]!;
    expect(w.public_key).toMatch(PUBLIC);
    expect(run.stdout).toMatch(new RegExp(`^public key +${w.public_key!.replace(/[+/]/g, "\\$&")}$`, "m"));
    expect(run.stdout).toContain("Public key (receivers verify v1a signatures with it");
    expect(run.stdout).not.toMatch(/whsk_|whsec_|Signing secret/);
    const got = await cli.run(["webhooks", "get", w.id]);
    expect(got.stdout).toContain(w.public_key!);
    const rotated = await cli.run(["webhooks", "rotate", w.id, "--grace", "1h"]);
    const [next] = rotated.stdout.match(PUBLIC) ?? [];
    expect(next).toBe((await getWebhook(cli, w.id)).public_key);
    expect(next).not.toBe(w.public_key);
    expect(rotated.stdout).not.toMatch(/whsk_/);
    const back = await cli.run(["webhooks", "update", w.id, "--signature-scheme", "standard-webhooks"]);
    expect(back.code).toBe(0);
    expect(back.stdout.match(new RegExp(SECRET, "g"))).toHaveLength(1);
    expect(back.stdout).not.toMatch(/public key/);
  });
});

describe("webhooks: client certificate (mutual TLS)", () => {
  it("create and update take --client-cert/--client-key files; --remove-client-cert drops it; the key is never printed", async () => {
    const tls = await testClientTls();
    const dir = mkdtempSync(join(tmpdir(), "herald-cli-mtls-"));
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    try {
      const cert = file("alice.crt", tls.alice.cert);
      const key = file("alice.key", tls.alice.key);
      const encrypted = file("alice-enc.key", tls.aliceEncryptedKey);
      const bobCert = file("bob.crt", tls.bob.cert);
      const bobKey = file("bob.key", tls.bob.key);
      const cli = await cliHarness();
      const made = await cli.run([
        "webhooks",
        "create",
        "--url",
        receiverUrl(),
        "--events",
        "message.delivered",
        "--client-cert",
        cert,
        "--client-key",
        key,
      ]);
      expect(made.code).toBe(0);
      expect(made.stdout).toMatch(
        /^client certificate +CN=alice; issued by CN=Herald Test Client CA clients; valid until \S+; sha256 [0-9a-f:]{95}$/m,
      );
      const [w] = (await unwrap(cli.client.GET("/api/v1/webhooks"))).data;
      // An encrypted key: its passphrase from HERALD_CLIENT_KEY_PASSPHRASE, never an argument.
      const missing = await cli.run([
        "webhooks",
        "update",
        w!.id,
        "--client-cert",
        cert,
        "--client-key",
        encrypted,
      ]);
      expect(missing.code).toBe(1);
      expect(missing.err.join("\n")).toContain("body.client_certificate.passphrase");
      const withPass = await cli.run(
        ["webhooks", "update", w!.id, "--client-cert", bobCert, "--client-key", bobKey, "--json"],
        { HERALD_CLIENT_KEY_PASSPHRASE: "" },
      );
      expect(withPass.json<Webhook>().client_certificate?.subject).toBe("CN=bob");
      const enc = await cli.run(
        ["webhooks", "update", w!.id, "--client-cert", cert, "--client-key", encrypted],
        {
          HERALD_CLIENT_KEY_PASSPHRASE: ENCRYPTED_KEY_PASSPHRASE,
        },
      );
      expect(enc.code).toBe(0);
      expect(enc.stdout).toMatch(/^client certificate +CN=alice;/m);
      const removed = await cli.run(["webhooks", "update", w!.id, "--remove-client-cert", "--json"]);
      expect(removed.json<Webhook>().client_certificate).toBeNull();
      // Usage errors: half a pair, an unreadable file, both a certificate and its removal.
      const half = await cli.run(["webhooks", "update", w!.id, "--client-cert", cert]);
      expect([half.code, half.err.join(" ")]).toEqual([2, expect.stringContaining("go together")]);
      const unreadable = await cli.run([
        "webhooks",
        "update",
        w!.id,
        "--client-cert",
        cert,
        "--client-key",
        join(dir, "nope"),
      ]);
      expect([unreadable.code, unreadable.err.join(" ")]).toEqual([
        2,
        expect.stringContaining("cannot read"),
      ]);
      const both = await cli.run([
        "webhooks",
        "update",
        w!.id,
        "--client-cert",
        cert,
        "--client-key",
        key,
        "--remove-client-cert",
      ]);
      expect(both.code).toBe(2);
      for (const r of [made, missing, withPass, enc, removed, half, unreadable, both]) {
        const all = `${r.stdout}\n${r.err.join("\n")}`;
        expect(all).not.toContain("PRIVATE KEY");
        expect(all).not.toContain(ENCRYPTED_KEY_PASSPHRASE);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
