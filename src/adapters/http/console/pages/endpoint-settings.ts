import { html } from "hono/html";
import type { Endpoint, Ordering } from "../../../../domain/endpoint.ts";
import { OPERATIONAL_EVENT_TYPES, PUBLISHED_EVENT_TYPES } from "../../../../domain/event-catalog.ts";
import { rateLimitText } from "../../../../domain/rate-limit.ts";
import { csrfField, type Html } from "../view.ts";

/** The event types to tick: the published ones, then the operational ones Herald sends itself. */
export function eventChoices(selected: readonly string[]): Html {
  const box = (t: string) =>
    html`<label class="check"><input type="checkbox" name="events" value="${t}"${selected.includes(t) ? html` checked` : ""} /> ${t}</label>`;
  return html`<fieldset class="events"><legend>Event types</legend>
${PUBLISHED_EVENT_TYPES.map(box)}
</fieldset>
<fieldset class="events"><legend>Operational events <span class="muted small">(sent by Herald about this project's other endpoints: wire them to your alerting)</span></legend>
${OPERATIONAL_EVENT_TYPES.map(box)}
</fieldset>`;
}

/** The rate limit's text box: `5/s`, `300/m`, or empty for none. */
export function rateLimitInput(value: string): Html {
  return html`<label for="rate_limit">Rate limit <span class="muted small">(at most N per second or minute: 5/s, 300/m; empty for none)</span></label>
<input id="rate_limit" name="rate_limit" type="text" maxlength="16" value="${value}" placeholder="none" />`;
}

/** The ordering choice. */
export function orderingSelect(value: Ordering): Html {
  return html`<label for="ordering">Ordering <span class="muted small">(FIFO: one at a time, in the order events were accepted; a failing event holds the ones after it)</span></label>
<select id="ordering" name="ordering"><option value="none"${value === "none" ? html` selected` : ""}>none</option><option value="fifo"${value === "fifo" ? html` selected` : ""}>FIFO</option></select>`;
}

/** The endpoint page's settings form: URL, description, rate limit, ordering, event types. */
export function settingsSection(action: string, csrf: string, e: Endpoint): Html {
  return html`<section aria-labelledby="h-edit"><h2 id="h-edit">Settings</h2>
<form method="post" action="${action}" class="stack">${csrfField(csrf)}
${
  e.destination
    ? html`<p>URL <code>${e.url}</code> <span class="muted small">(derived from its ${e.destination.kind} destination)</span></p>`
    : html`<label for="url">URL</label><input id="url" name="url" type="url" required maxlength="2048" value="${e.url}" />`
}
<label for="description">Description</label><input id="description" name="description" type="text" maxlength="1024" value="${e.description ?? ""}" />
${rateLimitInput(e.rateLimit ? rateLimitText(e.rateLimit) : "")}
${orderingSelect(e.ordering)}
${eventChoices(e.events)}
<button type="submit">Save settings</button></form></section>`;
}
