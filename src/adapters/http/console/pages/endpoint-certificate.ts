import { html } from "hono/html";
import {
  type ClientCertificateInput,
  MAX_CERTIFICATE_PEM_LENGTH,
  MAX_PASSPHRASE_LENGTH,
  MAX_PRIVATE_KEY_PEM_LENGTH,
} from "../../../../domain/client-certificate.ts";
import type { Endpoint } from "../../../../domain/endpoint.ts";
import { invalid, type ValidationIssue } from "../../../../domain/errors.ts";
import { type Form, field } from "../forms.ts";
import { csrfField, type Html, time } from "../view.ts";

/** What the endpoint's properties show of its client certificate: public facts, never the key. */
export function certificateFacts(e: Endpoint, now = new Date()): Html {
  const c = e.clientCertificate;
  if (!c) return html`none`;
  const expired = c.notAfter.getTime() <= now.getTime();
  return html`<code>${c.subject}</code>, issued by <code>${c.issuer}</code><br />
valid until ${time(c.notAfter)}${expired ? html` <strong>(expired: receivers refuse it; replace it below)</strong>` : ""}<br />
<span class="muted small">SHA-256 <code>${c.fingerprint}</code>. Presented when the receiver asks for a client certificate; the private key is encrypted at rest and never shown.</span>`;
}

/**
 * The client certificate form (mutual TLS, ADR 22): the PEM certificate and private key, and the
 * passphrase of an encrypted key. Write-only as custom headers are: the boxes are always empty, also
 * after an error, so no page holds a key. Removing it is its own form.
 */
export function certificateSection(action: string, csrf: string, e: Endpoint): Html {
  const has = e.clientCertificate !== null;
  return html`<section aria-labelledby="h-certificate"><h2 id="h-certificate">Client certificate (mutual TLS)</h2>
<p class="muted small">For receivers that require a client certificate: Herald presents it in the TLS handshake when asked. Paste the certificate (then any intermediates) and its private key in PEM. The key is encrypted at rest and never shown again${has ? "; saving replaces the current certificate and key" : ""}.</p>
<form method="post" action="${action}" class="stack wide">${csrfField(csrf)}
<label for="client-certificate">Certificate (PEM)</label>
<textarea id="client-certificate" name="certificate" rows="6" maxlength="${MAX_CERTIFICATE_PEM_LENGTH}" spellcheck="false" placeholder="-----BEGIN CERTIFICATE-----"></textarea>
<label for="client-key">Private key (PEM)</label>
<textarea id="client-key" name="private_key" rows="4" maxlength="${MAX_PRIVATE_KEY_PEM_LENGTH}" spellcheck="false" autocomplete="off" placeholder="-----BEGIN PRIVATE KEY-----"></textarea>
<label for="client-key-passphrase">Passphrase (only for an encrypted key; not kept)</label>
<input id="client-key-passphrase" name="passphrase" type="password" maxlength="${MAX_PASSPHRASE_LENGTH}" autocomplete="off" />
<button type="submit">${has ? "Replace client certificate" : "Save client certificate"}</button></form>
${
  has
    ? html`<form method="post" action="${action}" class="row">${csrfField(csrf)}<input type="hidden" name="remove" value="yes" />
<button type="submit" class="secondary">Remove client certificate</button></form>`
    : ""
}</section>`;
}

/** The change the certificate form asks for: a new certificate and key, or null to remove it. */
export function certificateChangeOf(form: Form): ClientCertificateInput | null {
  if (field(form, "remove") === "yes") return null;
  const certificate = field(form, "certificate");
  const privateKey = field(form, "private_key");
  // Not trimmed: a passphrase may begin or end with a space.
  const raw = Array.isArray(form.passphrase) ? form.passphrase[0] : form.passphrase;
  const passphrase = typeof raw === "string" ? raw : "";
  const issues: ValidationIssue[] = [];
  const check = (ok: boolean, name: string, message: string) => {
    if (!ok) issues.push({ path: `client_certificate.${name}`, message });
  };
  // `field` trims: an empty box is missing.
  check(certificate !== "", "certificate", "is required");
  check(privateKey !== "", "private_key", "is required");
  check(
    certificate.length <= MAX_CERTIFICATE_PEM_LENGTH,
    "certificate",
    `is over ${MAX_CERTIFICATE_PEM_LENGTH} characters`,
  );
  check(
    privateKey.length <= MAX_PRIVATE_KEY_PEM_LENGTH,
    "private_key",
    `is over ${MAX_PRIVATE_KEY_PEM_LENGTH} characters`,
  );
  check(
    passphrase.length <= MAX_PASSPHRASE_LENGTH,
    "passphrase",
    `is over ${MAX_PASSPHRASE_LENGTH} characters`,
  );
  if (issues.length) throw invalid(issues);
  return { certificate, privateKey, passphrase: passphrase || undefined };
}
