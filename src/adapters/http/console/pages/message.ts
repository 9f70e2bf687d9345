import { html } from "hono/html";
import type { Html } from "../view.ts";

export function signInPage(): Html {
  return html`<div class="narrow">
<h1>Sign in to the Herald Console</h1>
<form method="post" action="/console/sign-in" class="stack">
<label for="token">API token</label>
<input id="token" name="token" type="password" required autocomplete="off" spellcheck="false" placeholder="hrld_…" aria-describedby="token-help" autofocus />
<p id="token-help" class="muted small">The console signs you in for 12 hours with a session cookie; the token itself is not kept in the browser.
No token yet? Run <code>npx herald tokens create</code>. Or run <code>npx herald console</code>, which prints a one-time sign-in link.</p>
<button type="submit">Sign in</button>
</form></div>`;
}

export function messagePage(heading: string, text: string, link?: { href: string; label: string }): Html {
  return html`<div class="narrow"><h1>${heading}</h1><p>${text}</p>${link ? html`<p><a class="button" href="${link.href}">${link.label}</a></p>` : ""}</div>`;
}
