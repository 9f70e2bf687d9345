import { html } from "hono/html";
import { HEADER_VALUE_MASK } from "../../../../domain/custom-headers.ts";
import type { Endpoint, Ordering } from "../../../../domain/endpoint.ts";
import { EVENT_TYPES, type EventType } from "../../../../domain/event-catalog.ts";
import { rateLimitText } from "../../../../domain/rate-limit.ts";
import { csrfField, type Html, time } from "../view.ts";

function eventChoices(selected: readonly string[]): Html {
  return html`<fieldset class="events"><legend>Event types</legend>
${EVENT_TYPES.map(
  (t) =>
    html`<label class="check"><input type="checkbox" name="events" value="${t}"${selected.includes(t) ? html` checked` : ""} /> ${t}</label>`,
)}
</fieldset>`;
}

/** The rate limit's text box: `5/s`, `300/m`, or empty for none. */
function rateLimitInput(value: string): Html {
  return html`<label for="rate_limit">Rate limit <span class="muted small">(at most N per second or minute: 5/s, 300/m; empty for none)</span></label>
<input id="rate_limit" name="rate_limit" type="text" maxlength="16" value="${value}" placeholder="none" />`;
}

/** The ordering choice. */
function orderingSelect(value: Ordering): Html {
  return html`<label for="ordering">Ordering <span class="muted small">(FIFO: one at a time, in the order events were accepted; a failing event holds the ones after it)</span></label>
<select id="ordering" name="ordering"><option value="none"${value === "none" ? html` selected` : ""}>none</option><option value="fifo"${value === "fifo" ? html` selected` : ""}>FIFO</option></select>`;
}

/** The form for a new endpoint (console only). */
export function newEndpointPage(
  base: string,
  csrf: string,
  values?: { url?: string; description?: string; events?: string[]; rateLimit?: string; ordering?: Ordering },
): Html {
  return html`<h1>New endpoint</h1>
<form method="post" action="${base}/endpoints" class="stack">
${csrfField(csrf)}
<label for="url">URL <span class="muted small">(https://…, where Herald will POST each event)</span></label>
<input id="url" name="url" type="url" required maxlength="2048" value="${values?.url ?? ""}" placeholder="https://example.com/webhooks/herald" />
<label for="description">Description <span class="muted small">(optional)</span></label>
<input id="description" name="description" type="text" maxlength="1024" value="${values?.description ?? ""}" />
${rateLimitInput(values?.rateLimit ?? "")}
${orderingSelect(values?.ordering ?? "none")}
${eventChoices(values?.events ?? [])}
<button type="submit">Create endpoint</button>
</form>`;
}

/** The signing secret, shown once, after a creation or a rotation. */
export function secretPage(base: string, e: Endpoint, secret: string, rotated: boolean): Html {
  return html`<h1>${rotated ? "New signing secret" : "Endpoint created"}</h1>
<p>${rotated ? "The secret was rotated." : html`Herald will send ${e.events.join(", ")} to <strong>${e.url}</strong>.`}
Copy the signing secret now: <strong>it is shown only this once</strong>. Your receiver uses it to verify the <code>${e.signatureScheme === "standard-webhooks" ? "webhook-signature" : "X-Webhook-Signature"}</code> header.</p>
<div class="secret"><code id="secret">${secret}</code> <button type="button" data-copy="secret">Copy</button></div>
<p><a class="button" href="${base}/endpoints/${e.id}">Continue to the endpoint</a></p>`;
}

/** `held`: the deliveries its ordering holds back (ADR 16). */
export function endpointPage(base: string, csrf: string, e: Endpoint, held = 0): Html {
  const action = (path: string) => `${base}/endpoints/${e.id}/${path}`;
  const types = e.events as readonly EventType[];
  return html`<div class="head"><h1>Endpoint</h1><a class="button secondary" href="${base}/deliveries?webhook_id=${e.id}">Deliveries</a></div>
<dl class="props">
<dt>URL</dt><dd><code>${e.url}</code></dd>
<dt>Id</dt><dd><code>${e.id}</code></dd>
<dt>State</dt><dd>${e.enabled ? "enabled" : html`<strong>disabled</strong> (${e.disabledReason ?? "manual"})`}</dd>
<dt>Signature scheme</dt><dd><code>${e.signatureScheme}</code> <span class="muted small">(${e.signatureScheme === "standard-webhooks" ? "webhook-id, webhook-timestamp, webhook-signature" : "X-Webhook-Id, X-Webhook-Timestamp, X-Webhook-Signature"})</span></dd>
<dt>Custom headers</dt><dd>${
    e.headers.length === 0
      ? "none"
      : html`${e.headers.map((h) => html`<code>${h.name}: ${HEADER_VALUE_MASK}</code><br />`)}
<span class="muted small">Values are encrypted at rest and never shown.</span>`
  }</dd>
<dt>Filter</dt><dd>${
    e.filter === null
      ? "none: every event of its types"
      : html`<pre class="code" id="filter" tabindex="0" aria-label="Filter">${JSON.stringify(e.filter, null, 2)}</pre><span class="muted small">Only matching events are delivered. Change it with <code>PATCH /api/v1/webhooks/${e.id}</code> or <code>npx herald webhooks update ${e.id} --filter '…'</code>; try it with <code>webhooks filter-test</code>.</span>`
  }</dd>
<dt>Rate limit</dt><dd>${e.rateLimit ? rateLimitText(e.rateLimit) : "none"}</dd>
<dt>Ordering</dt><dd>${e.ordering === "fifo" ? html`FIFO, <strong>${held}</strong> held behind the head` : "none"}</dd>
<dt>Failure streak</dt><dd>${e.failingSince ? html`failing since ${time(e.failingSince)}` : "none"}</dd>
<dt>Created</dt><dd>${time(e.createdAt)}</dd>
<dt>Updated</dt><dd>${time(e.updatedAt)}</dd>
</dl>

<section aria-labelledby="h-state"><h2 id="h-state">${e.enabled ? "Disable" : "Enable"}</h2>
<form method="post" action="${action(e.enabled ? "disable" : "enable")}">${csrfField(csrf)}
<p class="muted small">${e.enabled ? "While disabled, new events get a skipped record and nothing is sent." : "Enabling clears the failure streak; skipped deliveries can then be recovered below."}</p>
<button type="submit">${e.enabled ? "Disable endpoint" : "Enable endpoint"}</button></form></section>

<section aria-labelledby="h-edit"><h2 id="h-edit">Settings</h2>
<form method="post" action="${action("update")}" class="stack">${csrfField(csrf)}
<label for="url">URL</label><input id="url" name="url" type="url" required maxlength="2048" value="${e.url}" />
<label for="description">Description</label><input id="description" name="description" type="text" maxlength="1024" value="${e.description ?? ""}" />
${rateLimitInput(e.rateLimit ? rateLimitText(e.rateLimit) : "")}
${orderingSelect(e.ordering)}
${eventChoices(e.events)}
<button type="submit">Save settings</button></form></section>

<section aria-labelledby="h-test"><h2 id="h-test">Send a test event</h2>
<form method="post" action="${action("test")}" class="row">${csrfField(csrf)}
<label for="test-type">Event type</label>
<select id="test-type" name="type">${types.map((t) => html`<option value="${t}">${t}</option>`)}</select>
<button type="submit">Send test event</button></form></section>

<section aria-labelledby="h-rotate"><h2 id="h-rotate">Rotate the signing secret</h2>
<form method="post" action="${action("rotate")}" class="row">${csrfField(csrf)}
<label for="grace">Keep the old secret signing for</label>
<select id="grace" name="grace_period_seconds">
<option value="0">no overlap</option><option value="3600" selected>1 hour</option><option value="86400">1 day</option><option value="604800">7 days</option>
</select>
<button type="submit">Rotate secret</button></form></section>

<section aria-labelledby="h-recover"><h2 id="h-recover">Recover after an outage</h2>
<form method="post" action="${action("recover")}" class="row">${csrfField(csrf)}
<label for="since">Since</label><input id="since" name="since" type="text" required value="6h" placeholder="6h or 2026-11-21T10:00:00Z" aria-describedby="since-help" />
<label for="until">Until</label><input id="until" name="until" type="text" placeholder="now" />
<button type="submit">Re-send failed and skipped</button>
<p id="since-help" class="muted small">A duration back from now (30m, 6h, 2d) or a UTC time; at most 14 days. Each event whose latest delivery failed or was skipped is sent once more.</p>
</form></section>

<section aria-labelledby="h-delete"><h2 id="h-delete">Delete</h2>
<form method="post" action="${action("delete")}" class="row">${csrfField(csrf)}
<label class="check"><input type="checkbox" name="confirm" value="yes" required /> Yes, delete this endpoint and cancel what is still owed to it</label>
<button type="submit" class="danger">Delete endpoint</button></form></section>`;
}
