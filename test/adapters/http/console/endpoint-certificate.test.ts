import { describe, expect, it } from "vitest";
import { ENCRYPTED_KEY_PASSPHRASE, testClientTls } from "../../../support/tls.ts";
import { keyMaterial } from "../api/suite/client-certificates.ts";
import { makeConsoleHarness } from "./console-harness.ts";

// The console sets, replaces and removes an endpoint's client certificate (issue 19 item 4): its
// facts shown, the key write-only (never on a page, also after a refused form).

const HOOK = "https://127.0.0.1:9/hook";

describe("console: client certificate", () => {
  it("saves, replaces and removes it; pages show its facts and never the key or passphrase", async () => {
    const tls = await testClientTls();
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const res = await h.api(token, "/webhooks", {
      method: "POST",
      body: JSON.stringify({ url: HOOK, events: ["message.delivered"] }),
    });
    const { id } = (await res.json()) as { id: string };
    const path = `/console/endpoints/${id}`;
    const pages: string[] = [];
    const before = await (await b.get(path)).text();
    pages.push(before);
    expect(before).toContain('<h2 id="h-certificate">Client certificate (mutual TLS)</h2>');
    expect(before).toMatch(/<dt>Client certificate<\/dt><dd>none<\/dd>/);
    expect(before).not.toContain("Remove client certificate");

    const post = async (form: Record<string, string>) =>
      b.post(`${path}/certificate`, { _csrf: await b.csrf(path), ...form });
    const saved = await post({
      certificate: tls.alice.cert,
      private_key: tls.aliceEncryptedKey,
      passphrase: ENCRYPTED_KEY_PASSPHRASE,
    });
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe(`${path}?notice=certificate`);
    const stored = h.repos.endpoints.rows.get(id)!.clientCertificate!;
    expect(stored.subject).toBe("CN=alice");
    // Decrypted once and sealed: the stored key opens to the unencrypted key of the certificate.
    expect(await h.cipher.open(stored.sealedKey)).toContain("-----BEGIN PRIVATE KEY-----");
    const after = await (await b.get(`${path}?notice=certificate`)).text();
    pages.push(after);
    expect(after).toContain("<code>CN=alice</code>, issued by <code>CN=Herald Test Client CA clients</code>");
    expect(after).toContain(stored.fingerprint);
    expect(after).toContain("Remove client certificate");
    expect(after).toContain("Client certificate saved");

    // A refused form (the key of another certificate): the page again, the error named, nothing kept.
    const refused = await post({ certificate: tls.alice.cert, private_key: tls.bob.key });
    const refusedPage = await refused.text();
    pages.push(refusedPage);
    expect(refused.status).toBe(422);
    expect(refusedPage).toContain("client_certificate.private_key: does not belong to the certificate");
    expect(h.repos.endpoints.rows.get(id)!.clientCertificate?.subject).toBe("CN=alice");
    const empty = await post({ certificate: "", private_key: "" });
    pages.push(await empty.text());
    expect(empty.status).toBe(422);

    const replaced = await post({ certificate: tls.bob.cert, private_key: tls.bob.key });
    expect(replaced.status).toBe(303);
    expect(h.repos.endpoints.rows.get(id)!.clientCertificate?.subject).toBe("CN=bob");
    pages.push(await (await b.get(path)).text());

    const removed = await post({ remove: "yes" });
    expect(removed.headers.get("location")).toBe(`${path}?notice=certificate-removed`);
    expect(h.repos.endpoints.rows.get(id)!.clientCertificate).toBeNull();

    for (const page of pages) {
      for (const key of [tls.alice.key, tls.bob.key, tls.aliceEncryptedKey])
        expect(page).not.toContain(keyMaterial(key).slice(10, 50));
      expect(page).not.toContain(ENCRYPTED_KEY_PASSPHRASE);
      expect(page).not.toContain("BEGIN PRIVATE KEY-----\n");
    }
  });
});
