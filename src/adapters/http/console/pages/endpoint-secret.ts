import { html } from "hono/html";
import type { Endpoint } from "../../../../domain/endpoint.ts";
import { keyKind } from "../../../../domain/signature-scheme.ts";
import { type C, type PageContext, type PageRoutes, param } from "../context.ts";
import { type Flash, setFlash, takeFlash } from "../flash.ts";
import type { Html } from "../view.ts";
import { schemeHeaders } from "./endpoint-scheme.ts";
import { messagePage } from "./message.ts";

const SECRET_TITLES = {
  created: "Endpoint created",
  rotated: "New signing secret",
  switched: "Scheme changed",
};

/**
 * What the receiver verifies with, just issued (creation, rotation, a switch to another kind of
 * key): an HMAC secret, shown only this once; or an Ed25519 endpoint's public key, which is no secret
 * and stays on the endpoint's page.
 */
export function secretPage(
  base: string,
  e: Endpoint,
  secret: string,
  why: "created" | "rotated" | "switched",
): Html {
  const publicKey = secret.startsWith("whpk_");
  const title = publicKey && why === "rotated" ? "New key pair" : SECRET_TITLES[why];
  const header = html`<code>${schemeHeaders(e.signatureScheme).split(", ")[2]}</code>`;
  const what =
    why === "created"
      ? html`Herald will send ${e.events.join(", ")} to <strong>${e.url}</strong>, signed with <code>${e.signatureScheme}</code>.`
      : why === "rotated"
        ? publicKey
          ? "A new key pair was made."
          : "The secret was rotated."
        : html`Deliveries are now signed with <code>${e.signatureScheme}</code>; the previous ${publicKey ? "secret" : "key"} no longer signs.`;
  if (publicKey) {
    return html`<h1>${title}</h1>
<p>${what} Your receiver verifies the ${header} header's <code>v1a</code> signatures with this <strong>public key</strong>. It is not secret, and the endpoint's page shows it at any time; Herald keeps the private key and never shows it.</p>
<div class="secret"><code id="secret">${secret}</code> <button type="button" data-copy="secret">Copy</button></div>
<p><a class="button" href="${base}/endpoints/${e.id}">Continue to the endpoint</a></p>`;
  }
  return html`<h1>${title}</h1>
<p>${what}
Copy the signing secret now: <strong>it is shown only this once</strong>. Your receiver uses it to verify the ${header} header.</p>
<div class="secret"><code id="secret">${secret}</code> <button type="button" data-copy="secret">Copy</button></div>
<p><a class="button" href="${base}/endpoints/${e.id}">Continue to the endpoint</a></p>`;
}

/** A key issued by a form, shown once: its flash goes to the endpoint's secret page, and the answer redirects there. */
export async function showSecretOnce(
  c: C,
  p: PageContext,
  endpointId: string,
  secret: string,
  why: Flash["why"],
): Promise<Response> {
  const shown = `/endpoints/${endpointId}/secret`;
  await setFlash(c, p.mode, p.base + shown, { kind: "secret", endpointId, secret, why });
  return p.redirect(c, shown);
}

/** The page after a creation or a rotation: the secret the flash carries, once; then only that it was shown. */
export const secretRoutes: PageRoutes = (r, p) => {
  const { base } = p;
  r.get(
    "/endpoints/:id/secret",
    p.guarded(async (c) => {
      const e = await p.endpointOf(c, param(c, "id"));
      const flash = await takeFlash(
        c,
        p.mode,
        `${base}/endpoints/${e.id}/secret`,
        (f) => f.kind === "secret" && f.endpointId === e.id,
      );
      if (flash) {
        return p.render(
          c,
          p.frame(c, SECRET_TITLES[flash.why] ?? "New secret"),
          secretPage(base, e, flash.secret, flash.why),
        );
      }
      if (keyKind(e.signatureScheme) === "ed25519") {
        // Nothing secret was shown: the public key stays readable on the endpoint's page.
        return p.render(
          c,
          p.frame(c, "Public key"),
          messagePage(
            "The public key is on the endpoint's page",
            "An Ed25519 endpoint's public key is not secret: the endpoint's page shows it at any time. Herald keeps the private key and never shows it.",
            { href: `${base}/endpoints/${e.id}`, label: "Continue to the endpoint" },
          ),
        );
      }
      return p.render(
        c,
        p.frame(c, "Secret already shown"),
        messagePage(
          "This secret was shown once",
          "A signing secret is shown only on the page right after it is made, and only once. If you did not copy it, rotate the secret to make a new one.",
          { href: `${base}/endpoints/${e.id}`, label: "Continue to the endpoint" },
        ),
      );
    }),
  );
};
