import { z } from "@hono/zod-openapi";
import { html } from "hono/html";
import type { Delivery } from "../../../../domain/delivery.ts";
import type { Endpoint } from "../../../../domain/endpoint.ts";
import type { Envelope } from "../../../../domain/envelope.ts";
import { EVENT_DATA_SCHEMAS, EVENT_DESCRIPTIONS, EVENT_TYPES } from "../../../../domain/event-catalog.ts";
import { sampleEventData } from "../../../../domain/samples.ts";
import { csrfField, type Html, statusBadge, time } from "../view.ts";
import { deliveryTable, prettyJson } from "./deliveries.ts";

export function signInPage(csrfHint: { failed?: boolean } = {}): Html {
  return html`<div class="narrow">
<h1>Sign in to the Herald Console</h1>
<form method="post" action="/console/sign-in" class="stack">
<label for="token">API token</label>
<input id="token" name="token" type="password" required autocomplete="off" spellcheck="false" placeholder="hrld_…" aria-describedby="token-help" autofocus />
<p id="token-help" class="muted small">The console signs you in for 12 hours with a session cookie; the token itself is not kept in the browser.
No token yet? Run <code>npx herald tokens create</code>. Or run <code>npx herald console</code>, which prints a one-time sign-in link.</p>
<button type="submit">Sign in</button>
</form>${csrfHint.failed ? "" : ""}</div>`;
}

export function messagePage(heading: string, text: string, link?: { href: string; label: string }): Html {
  return html`<div class="narrow"><h1>${heading}</h1><p>${text}</p>${link ? html`<p><a class="button" href="${link.href}">${link.label}</a></p>` : ""}</div>`;
}

export function eventPage(
  base: string,
  envelope: Envelope,
  body: string,
  latest: Delivery[],
  endpoints: Map<string, Endpoint>,
): Html {
  return html`<h1>Event <code>${envelope.id}</code></h1>
<dl class="props"><dt>Type</dt><dd>${envelope.type}</dd><dt>Occurred</dt><dd>${time(new Date(envelope.occurred_at))}</dd></dl>
<h2>Sent to</h2>
${
  latest.length === 0
    ? html`<p class="empty">It was not fanned out to any endpoint you can see: none was subscribed to ${envelope.type} when it was published.</p>`
    : html`<table><caption class="sr">Each endpoint's latest attempt</caption>
<thead><tr><th scope="col">Endpoint</th><th scope="col">Latest attempt</th><th scope="col">Status</th><th scope="col" class="num">HTTP</th><th scope="col">Attempted</th></tr></thead>
<tbody>${latest.map(
        (d) =>
          html`<tr><td><a href="${base}/endpoints/${d.webhookId}">${endpoints.get(d.webhookId)?.url ?? d.webhookId}</a></td><td><a href="${base}/deliveries/${d.id}">attempt ${d.attempt}</a></td><td>${statusBadge(d.status)}</td><td class="num">${d.responseStatus ?? "—"}</td><td>${time(d.attemptedAt, "not yet")}</td></tr>`,
      )}</tbody></table>`
}
<h2>Envelope</h2>
<div class="secret"><button type="button" data-copy="envelope">Copy JSON</button></div>
<pre class="code" id="envelope" tabindex="0">${prettyJson(body)}</pre>`;
}

export function livePage(base: string, recent: Delivery[], urls: Map<string, string>): Html {
  return html`<h1>Live</h1>
<p class="muted" id="live-state" role="status" aria-live="polite">Connecting…</p>
<p class="muted small">New attempts appear here as they happen, from every Herald process sharing the database. Nothing to watch? Send a test event from an <a href="${base}">endpoint's page</a>.</p>
<div data-live="${base}/live/stream" data-base="${base}">
${deliveryTable(base, recent, urls, "live-feed")}
</div>`;
}

export function catalogPage(): Html {
  const now = new Date("2026-11-21T10:00:00.000Z");
  return html`<h1>Event catalog</h1>
<p>Herald knows ${EVENT_TYPES.length} event types. Each delivery's body is an envelope whose <code>data</code> follows the type's schema below.</p>
<nav aria-label="Event types" class="toc">${EVENT_TYPES.map((t) => html`<a href="#${t}">${t}</a> `)}</nav>
${EVENT_TYPES.map((t) => {
  const schema = z.toJSONSchema(EVENT_DATA_SCHEMAS[t], { unrepresentable: "any" });
  const sample = sampleEventData(t, { subjectId: "6f1c2b9e-8a44-4c1e-9a53-0d5b2f7e1a10" }, now);
  return html`<section id="${t}" aria-labelledby="h-${t}"><h2 id="h-${t}">${t}</h2><p>${EVENT_DESCRIPTIONS[t]}</p>
<details><summary>data schema</summary><pre class="code" tabindex="0">${JSON.stringify(schema, null, 2)}</pre></details>
<details open><summary>sample data</summary><pre class="code" tabindex="0">${JSON.stringify(sample, null, 2)}</pre></details></section>`;
})}`;
}

export { csrfField };
