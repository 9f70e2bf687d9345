import { describe, expect, it } from "vitest";
import { makeConsoleHarness } from "./console-harness.ts";
import { createEndpoint, HOOK, type WebhookJson, webhook } from "./endpoint-edits-support.ts";

// The signature scheme switched in the console, and an Ed25519 endpoint created from its form (issue 17, item 5).

const SECRET = /whsec_[A-Za-z0-9+/=]+/;
const PUBLIC_KEY = /whpk_[A-Za-z0-9+/=]+/;

describe("console: signature scheme", () => {
  it("switches within HMAC without a new secret; to Ed25519 only when confirmed, showing the public key once; back to HMAC with a new secret once", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const e = await createEndpoint(h, token);
    const secretsOf = () => h.repos.endpoints.rows.get(e.id)!.secrets;
    const original = secretsOf();
    let csrf = await b.csrf(`/console/endpoints/${e.id}`);
    const page = await (await b.get(`/console/endpoints/${e.id}`)).text();
    expect(page).toContain('<input type="radio" name="signature_scheme" value="herald-v1" checked />');
    expect(page).toContain('value="standard-webhooks-ed25519"');

    const within = await b.post(`/console/endpoints/${e.id}/scheme`, {
      _csrf: csrf,
      signature_scheme: "standard-webhooks",
    });
    expect(within.status).toBe(303);
    expect(within.headers.get("location")).toBe(`/console/endpoints/${e.id}?notice=scheme`);
    expect(b.jar.has("herald_console_flash")).toBe(false);
    expect((await webhook(h, token, e.id)).signature_scheme).toBe("standard-webhooks");
    expect(secretsOf()).toEqual(original);

    // Across kinds the current secret stops signing at once: not without the tick.
    const unconfirmed = await b.post(`/console/endpoints/${e.id}/scheme`, {
      _csrf: csrf,
      signature_scheme: "standard-webhooks-ed25519",
    });
    expect(unconfirmed.status).toBe(422);
    expect(await unconfirmed.text()).toContain("Tick the box to confirm");
    expect((await webhook(h, token, e.id)).signature_scheme).toBe("standard-webhooks");
    expect(secretsOf()).toEqual(original);

    const toEd25519 = await b.post(`/console/endpoints/${e.id}/scheme`, {
      _csrf: csrf,
      signature_scheme: "standard-webhooks-ed25519",
      confirm: "yes",
    });
    expect(toEd25519.status).toBe(303);
    const shownAt = toEd25519.headers.get("location")!;
    expect(shownAt).toBe(`/console/endpoints/${e.id}/secret`);
    expect(await toEd25519.text()).not.toMatch(PUBLIC_KEY);
    const keyPage = await (await b.get(shownAt)).text();
    const api = await webhook(h, token, e.id);
    expect(api.signature_scheme).toBe("standard-webhooks-ed25519");
    expect(keyPage).toContain("<h1>Scheme changed</h1>");
    expect(keyPage).toContain(`<code id="secret">${api.public_key}</code>`);
    expect(keyPage).toContain("public key");
    expect(keyPage).not.toMatch(SECRET);
    expect(keyPage).not.toContain("whsk_");
    expect(secretsOf()).toHaveLength(1);
    expect(await h.cipher.open(secretsOf()[0]!.sealed)).toMatch(/^whsk_ed25519_/);
    // Once: a reload shows it no more; the endpoint page shows the public key (it is not secret).
    expect(await (await b.get(shownAt)).text()).toContain("The public key is on the endpoint&#39;s page");
    const endpointPage = await (await b.get(`/console/endpoints/${e.id}`)).text();
    expect(endpointPage).toContain(`<code id="public-key">${api.public_key}</code>`);
    expect(endpointPage).not.toContain("whsk_");
    expect(endpointPage).toContain('<h2 id="h-rotate">Rotate the signing key pair</h2>');
    // A rotation of the key pair shows its new public key, as the creation does.
    const rotated = await b.post(`/console/endpoints/${e.id}/rotate`, {
      _csrf: await b.csrf(`/console/endpoints/${e.id}`),
      grace_period_seconds: "0",
    });
    const rotatedPage = await (await b.follow(rotated)).text();
    const rotatedKey = (await webhook(h, token, e.id)).public_key!;
    expect(rotatedKey).not.toBe(api.public_key);
    expect(rotatedPage).toContain("<h1>New key pair</h1>");
    expect(rotatedPage).toContain(`<code id="secret">${rotatedKey}</code>`);
    expect(rotatedPage).not.toMatch(SECRET);

    csrf = await b.csrf(`/console/endpoints/${e.id}`);
    const back = await b.post(`/console/endpoints/${e.id}/scheme`, {
      _csrf: csrf,
      signature_scheme: "herald-v1",
      confirm: "yes",
    });
    expect(back.status).toBe(303);
    const secretPage = await (await b.follow(back)).text();
    const [secret] = secretPage.match(SECRET) ?? [];
    expect(secret).toBeDefined();
    expect(secret).not.toBe(e.secret);
    expect(secretPage).toContain("it is shown only this once");
    expect(secretPage).toContain("<code>X-Webhook-Signature</code>");
    expect(secretsOf()).toHaveLength(1);
    expect(await h.cipher.open(secretsOf()[0]!.sealed)).toBe(secret);
    expect(await (await b.get(`/console/endpoints/${e.id}/secret`)).text()).not.toMatch(SECRET);
    expect(await (await b.get(`/console/endpoints/${e.id}`)).text()).not.toContain(secret!);
    expect((await webhook(h, token, e.id)).public_key).toBeNull();

    const bogus = await b.post(`/console/endpoints/${e.id}/scheme`, {
      _csrf: csrf,
      signature_scheme: "rot13",
    });
    expect(bogus.status).toBe(422);
    expect(await bogus.text()).toContain(
      "signature_scheme: must be one of herald-v1, standard-webhooks, standard-webhooks-ed25519",
    );
  });

  it("creates an Ed25519 endpoint from the new-endpoint form and shows its public key, not a secret", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const form = await (await b.get("/console/endpoints/new")).text();
    expect(form).toContain('<option value="standard-webhooks-ed25519">');
    const created = await b.post("/console/endpoints", {
      _csrf: await b.csrf(),
      url: HOOK,
      events: ["message.delivered"],
      signature_scheme: "standard-webhooks-ed25519",
    });
    expect(created.status).toBe(303);
    const shown = await (await b.follow(created)).text();
    const [made] = ((await (await h.api(token, "/webhooks")).json()) as { data: WebhookJson[] }).data;
    expect(made!.signature_scheme).toBe("standard-webhooks-ed25519");
    expect(shown).toContain("<h1>Endpoint created</h1>");
    expect(shown).toContain(`<code id="secret">${made!.public_key}</code>`);
    expect(shown).not.toMatch(SECRET);
    expect(shown).not.toContain("shown only this once");
  });
});
