import { html } from "hono/html";
import type { Endpoint } from "../../../../domain/endpoint.ts";
import { invalid } from "../../../../domain/errors.ts";
import {
  keyKind,
  SCHEME_HEADERS,
  SIGNATURE_SCHEMES,
  type SignatureScheme,
} from "../../../../domain/signature-scheme.ts";
import { type Form, field } from "../forms.ts";
import { csrfField, type Html } from "../view.ts";

/** What each scheme sends, in a person's words. */
export const SCHEME_WORDS: Record<SignatureScheme, string> = {
  "herald-v1": "HMAC-SHA256 with the signing secret, in X-Webhook-Signature",
  "standard-webhooks": "Standard Webhooks: HMAC-SHA256 (v1) with the signing secret, in webhook-signature",
  "standard-webhooks-ed25519":
    "Standard Webhooks: Ed25519 (v1a) signatures, verified with a public key; the receiver holds no secret",
};

/** The headers a scheme sends, for the endpoint's description. */
export const schemeHeaders = (scheme: SignatureScheme): string => SCHEME_HEADERS[scheme].join(", ");

/** The form that changes how deliveries are signed. */
export function schemeSection(action: string, csrf: string, e: Endpoint): Html {
  return html`<section aria-labelledby="h-scheme"><h2 id="h-scheme">Signature scheme</h2>
<form method="post" action="${action}" class="stack">${csrfField(csrf)}
<fieldset class="options"><legend>Sign deliveries with</legend>
${SIGNATURE_SCHEMES.map(
  (s) =>
    html`<label class="option"><input type="radio" name="signature_scheme" value="${s}"${s === e.signatureScheme ? html` checked` : ""} /> <span><code>${s}</code><br /><span class="muted small">${SCHEME_WORDS[s]}</span></span></label>`,
)}
</fieldset>
<p class="muted small">Between <code>herald-v1</code> and <code>standard-webhooks</code> the secret stays; only the headers change, from the next attempt. Switching to or from <code>standard-webhooks-ed25519</code> issues a new ${keyKind(e.signatureScheme) === "ed25519" ? "signing secret" : "key pair"} at once and stops signing with the current ${keyKind(e.signatureScheme) === "ed25519" ? "key" : "secret"}, with no overlap: update the receiver right after.</p>
<label class="check"><input type="checkbox" name="confirm" value="yes" /> Yes, if this changes the kind of key, issue the new one now and drop the current one</label>
<button type="submit">Change scheme</button></form></section>`;
}

/**
 * The scheme the form asks for. A switch across key kinds drops every current key at once (ADR 13),
 * so it must be confirmed, as a deletion is; within a kind it needs no confirmation.
 */
export function schemeChangeOf(form: Form, e: Endpoint): SignatureScheme {
  const scheme = field(form, "signature_scheme");
  if (!(SIGNATURE_SCHEMES as readonly string[]).includes(scheme)) {
    throw invalid([{ path: "signature_scheme", message: `must be one of ${SIGNATURE_SCHEMES.join(", ")}` }]);
  }
  const chosen = scheme as SignatureScheme;
  if (keyKind(chosen) !== keyKind(e.signatureScheme) && field(form, "confirm") !== "yes") {
    throw invalid(
      [{ path: "confirm", message: "must be ticked to switch to another kind of key" }],
      `Switching from ${e.signatureScheme} to ${chosen} issues a new key and stops signing with the current one at once. Tick the box to confirm.`,
    );
  }
  return chosen;
}
