import { html } from "hono/html";
import { HEADER_VALUE_MASK } from "../../../../domain/custom-headers.ts";
import type { Endpoint } from "../../../../domain/endpoint.ts";
import type { EventType } from "../../../../domain/event-catalog.ts";
import { rateLimitText } from "../../../../domain/rate-limit.ts";
import { problemFromError, statusOf } from "../../problem.ts";
import type { C, PageContext } from "../context.ts";
import { csrfField, type Html, time } from "../view.ts";
import { certificateFacts, certificateSection } from "./endpoint-certificate.ts";
import { destinationFacts, kindFacts } from "./endpoint-destination.ts";
import { type DestinationDraft, destinationSection } from "./endpoint-destination-edit.ts";
import { type FilterDraft, type FilterTestView, filterSection } from "./endpoint-filter.ts";
import { headersSection } from "./endpoint-headers.ts";
import { schemeHeaders, schemeSection } from "./endpoint-scheme.ts";
import { settingsSection } from "./endpoint-settings.ts";

/** What the endpoint page shows beside the endpoint itself. */
export interface EndpointView {
  /** The deliveries its ordering holds back (ADR 16). */
  held: number;
  /** An Ed25519 endpoint's public key; null for the HMAC schemes. */
  publicKey: string | null;
  /** The filter form as typed, when the page answers a test or a failed save. */
  filterDraft?: FilterDraft | null;
  filterTest?: FilterTestView | null;
  /** The destination form as typed (no credential) and its issues, when the page answers a failed save. */
  destinationDraft?: DestinationDraft | null;
}

/** An endpoint's page: what it is, then a section per thing that can be changed or done to it. */
export function endpointPage(base: string, csrf: string, e: Endpoint, view: EndpointView): Html {
  const { held } = view;
  const action = (path: string) => `${base}/endpoints/${e.id}/${path}`;
  const types = e.events as readonly EventType[];
  return html`<div class="head"><h1>Endpoint</h1><a class="button secondary" href="${base}/deliveries?webhook_id=${e.id}">Deliveries</a></div>
<dl class="props">
<dt>Kind</dt><dd>${kindFacts(e)}</dd>
<dt>URL</dt><dd><code>${e.url}</code></dd>
${destinationFacts(e)}
<dt>Id</dt><dd><code>${e.id}</code></dd>
<dt>State</dt><dd>${e.enabled ? "enabled" : html`<strong>disabled</strong> (${e.disabledReason ?? "manual"})`}</dd>
<dt>Signature scheme</dt><dd><code>${e.signatureScheme}</code> <span class="muted small">(${schemeHeaders(e.signatureScheme)})</span></dd>
${view.publicKey ? html`<dt>Public key</dt><dd><code id="public-key">${view.publicKey}</code> <button type="button" class="secondary" data-copy="public-key">Copy</button><br /><span class="muted small">Receivers verify the <code>v1a</code> signatures with it; it is not secret.</span></dd>` : ""}
<dt>Custom headers</dt><dd>${
    e.headers.length === 0
      ? "none"
      : html`${e.headers.map((h) => html`<code>${h.name}: ${HEADER_VALUE_MASK}</code><br />`)}
<span class="muted small">Values are encrypted at rest and never shown.</span>`
  }</dd>
<dt>Filter</dt><dd>${
    e.filter === null
      ? "none: every event of its types"
      : html`<pre class="code" id="filter" tabindex="0" aria-label="Filter">${JSON.stringify(e.filter, null, 2)}</pre><span class="muted small">Only matching events are delivered. Change or test it below.</span>`
  }</dd>
<dt>Client certificate</dt><dd>${certificateFacts(e)}</dd>
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

${settingsSection(action("update"), csrf, e)}

${destinationSection(action("destination"), csrf, e, view.destinationDraft ?? null)}

${headersSection(action("headers"), csrf, e)}

${filterSection(action, csrf, e, view.filterDraft ?? null, view.filterTest ?? null)}

${schemeSection(action("scheme"), csrf, e)}

${e.destination ? "" : certificateSection(action("certificate"), csrf, e)}

<section aria-labelledby="h-test"><h2 id="h-test">Send a test event</h2>
<form method="post" action="${action("test")}" class="row">${csrfField(csrf)}
<label for="test-type">Event type</label>
<select id="test-type" name="type">${types.map((t) => html`<option value="${t}">${t}</option>`)}</select>
<button type="submit">Send test event</button></form></section>

<section aria-labelledby="h-rotate"><h2 id="h-rotate">Rotate the signing ${view.publicKey ? "key pair" : "secret"}</h2>
<form method="post" action="${action("rotate")}" class="row">${csrfField(csrf)}
<label for="grace">Keep the old ${view.publicKey ? "key" : "secret"} signing for</label>
<select id="grace" name="grace_period_seconds">
<option value="0">no overlap</option><option value="3600" selected>1 hour</option><option value="86400">1 day</option><option value="604800">7 days</option>
</select>
<button type="submit">${view.publicKey ? "Rotate key pair" : "Rotate secret"}</button></form></section>

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

/** The endpoint page, with what it shows beside the endpoint; a form's error above it when given. */
export async function showEndpoint(
  c: C,
  p: PageContext,
  e: Endpoint,
  extra: Partial<EndpointView> = {},
  error?: string,
  status = 200,
): Promise<Response> {
  const [held, keys] = await Promise.all([p.deps.endpoints.held([e]), p.deps.endpoints.publicKeys([e])]);
  const view: EndpointView = { held: held.get(e.id) ?? 0, publicKey: keys.get(e.id) ?? null, ...extra };
  return p.render(
    c,
    { ...p.frame(c, e.url), error: error ?? null },
    endpointPage(p.base, c.var.session.csrfToken, e, view),
    status,
  );
}

/**
 * A form of the endpoint page that failed validation: the page again with the error, the filter as
 * typed (never a header value), nothing changed. Other errors go to the console's error page.
 */
export function formFailed(
  c: C,
  p: PageContext,
  e: Endpoint,
  error: unknown,
  extra: Partial<EndpointView> = {},
) {
  const problem = problemFromError(error);
  if (problem?.code !== "validation_failed") throw error;
  const issues = problem.errors?.map((i) => `${i.path.replace(/^body\./, "")}: ${i.message}`).join("; ");
  return showEndpoint(
    c,
    p,
    e,
    extra,
    issues ? `${problem.detail} ${issues}.` : problem.detail,
    statusOf(problem.code),
  );
}
