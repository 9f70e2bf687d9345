import { html } from "hono/html";
import type { FilterTestResult } from "../../../../app/filter-test.ts";
import type { Endpoint } from "../../../../domain/endpoint.ts";
import { DomainError, invalid } from "../../../../domain/errors.ts";
import { type EventType, isEventType } from "../../../../domain/event-catalog.ts";
import type { EventFilter } from "../../../../domain/event-filter.ts";
import { sampleEventData } from "../../../../domain/samples.ts";
import type { C, PageContext } from "../context.ts";
import { type Form, field } from "../forms.ts";
import { csrfField, type Html } from "../view.ts";

/** A filter tried on an event from the endpoint page: what was tried on, and the matcher's verdict. */
export interface FilterTestView {
  /** "a sample message.delivered event", or the stored event's id. */
  tested: string;
  event: { type: string; resource_id?: string | undefined; data: unknown };
  result: FilterTestResult;
}

/** What the filter form holds when the page is shown again: the text typed, the event chosen. */
export interface FilterDraft {
  text: string;
  type?: string | undefined;
  eventId?: string | undefined;
}

/** The stored filter as the text box shows it; empty for none. */
export const filterText = (e: Endpoint): string =>
  e.filter === null ? "" : JSON.stringify(e.filter, null, 2);

/** Longest text the box takes: a filter is at most 4096 bytes as JSON, with room for indentation. */
const MAX_FILTER_TEXT = 16_384;

/**
 * The filter typed in the box: a JSON object, or nothing (no filter: every event of its types). The
 * use case checks the rest (operators, limits, fields of the endpoint's types), with paths under
 * `filter`.
 */
export function parseFilterText(text: string): EventFilter | null {
  const t = text.trim();
  if (!t || t === "null") return null;
  if (t.length > MAX_FILTER_TEXT) {
    throw invalid([{ path: "filter", message: `must be at most ${MAX_FILTER_TEXT} characters` }]);
  }
  let value: unknown;
  try {
    value = JSON.parse(t);
  } catch (e) {
    throw invalid([
      { path: "filter", message: `is not JSON (${e instanceof Error ? e.message : "unreadable"})` },
    ]);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalid([{ path: "filter", message: 'must be a JSON object such as {"data.channel": "email"}' }]);
  }
  // As the API: a key a plain object cannot keep as data is refused, not silently lost.
  if (Object.hasOwn(value, "__proto__")) {
    throw invalid([{ path: "filter.__proto__", message: "is not a field a filter can name" }]);
  }
  return value as EventFilter;
}

const toBase64Url = (text: string): string =>
  btoa(String.fromCharCode(...new TextEncoder().encode(text)))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");

const fromBase64Url = (text: string): string | null => {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    const bin = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
    return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bin, (ch) => ch.charCodeAt(0)));
  } catch {
    return null;
  }
};

/**
 * Where the filter form's Test button leads (Post/Redirect/Get): the endpoint's filter-test page,
 * the typed filter and the chosen event in the address, so a reload tries them again and changes
 * nothing. base64url keeps a 4 KB filter's address within what servers take (percent-encoding JSON
 * can triple it).
 */
export function filterTestPath(endpointId: string, form: Form): string {
  const text = field(form, "filter");
  if (text.length > MAX_FILTER_TEXT) parseFilterText(text);
  const q = new URLSearchParams({ filter: toBase64Url(text) });
  const eventId = field(form, "event_id");
  if (eventId) q.set("event", eventId);
  else q.set("type", field(form, "type"));
  return `/endpoints/${endpointId}/filter-test?${q}#filter-result`;
}

/** The draft a filter-test page's address carries. */
export function draftOf(c: C): FilterDraft {
  const text = fromBase64Url(c.req.query("filter") ?? "");
  if (text === null) throw invalid([{ path: "filter", message: "could not be read from the address" }]);
  return { text, type: c.req.query("type"), eventId: c.req.query("event") };
}

/**
 * Tries the draft filter on a sample event of a type, or on a stored event of the project, as
 * POST /webhooks/{id}/filter-test does. Nothing is stored or sent.
 */
export async function runFilterTest(
  c: C,
  p: PageContext,
  e: Endpoint,
  draft: FilterDraft,
): Promise<FilterTestView> {
  const filter = parseFilterText(draft.text);
  const scope = c.var.session.scope;
  let tested: string;
  let event: FilterTestView["event"];
  let occurredAt: string | undefined;
  if (draft.eventId) {
    const id = draft.eventId;
    const missing = invalid([
      {
        path: "event_id",
        message: `${id} is not an event of this project that you can see (or it was erased)`,
      },
    ]);
    if (!/^evt_[A-Za-z0-9]{1,64}$/.test(id)) throw missing;
    // A portal limited to some endpoints sees only events that reached them, as on the event page.
    if (c.var.session.webhookIds !== null && (await p.cd.insights.fanout(p.reach(c), id)).length === 0) {
      throw missing;
    }
    const envelope = await p.deps.events.get(scope, id).catch((err: unknown) => {
      throw err instanceof DomainError && err.kind === "not_found" ? missing : err;
    });
    tested = `the stored event ${envelope.id}`;
    event = { type: envelope.type, resource_id: envelope.resource_id, data: envelope.data };
    occurredAt = envelope.occurred_at;
  } else {
    const type = draft.type && isEventType(draft.type) ? draft.type : (e.events[0] as EventType);
    tested = `a sample ${type} event`;
    event = { type, data: sampleEventData(type, { subjectId: crypto.randomUUID() }, new Date()) };
  }
  const result = await p.deps.tools.testFilter(scope, e.id, {
    event: { type: event.type, data: event.data, resourceId: event.resource_id, occurredAt },
    filter,
  });
  return { tested, event, result };
}

function verdict(view: FilterTestView, saved: boolean): Html {
  const { result } = view;
  return html`<div id="filter-result" class="verdict ${result.matches ? "ok" : "bad"}" role="status">
${
  result.matches
    ? html`<p><strong>Matches.</strong> The endpoint would get a delivery for ${view.tested}${result.filter === null ? " (no filter: every event of its types)" : ""}.</p>`
    : html`<p><strong>Does not match.</strong> The endpoint would get no delivery for ${view.tested}:</p>
<ul>${result.reasons.map((r) => html`<li><code>${r.path}</code>: ${r.message}</li>`)}</ul>`
}
<details><summary>The event tried</summary><pre class="code" tabindex="0">${JSON.stringify(view.event, null, 2)}</pre></details>
${saved ? "" : html`<p class="muted small">This filter is not saved: the endpoint still uses the one shown above. Save filter to use it.</p>`}
</div>`;
}

/**
 * The payload filter form, with its test beside it: Test filter tries the text in the box (saved or
 * not) on an event; Save filter replaces the endpoint's filter (an empty box removes it).
 */
export function filterSection(
  action: (path: string) => string,
  csrf: string,
  e: Endpoint,
  draft: FilterDraft | null,
  test: FilterTestView | null,
): Html {
  const text = draft?.text ?? filterText(e);
  const chosen = draft?.type ?? e.events[0];
  const saved = draft === null || parseSafely(draft.text) === JSON.stringify(e.filter);
  return html`<section aria-labelledby="h-filter"><h2 id="h-filter">Payload filter</h2>
<form method="post" action="${action("filter")}" class="stack wide">${csrfField(csrf)}
<label for="filter-text">Filter <span class="muted small">(JSON, a MongoDB-style query over the envelope: <code>type</code>, <code>resource_id</code>, <code>occurred_at</code>, <code>data.…</code>; operators <code>$eq $ne $in $nin $gt $gte $lt $lte $exists $regex $not $and $or $nor</code>; empty for none)</span></label>
<textarea id="filter-text" name="filter" rows="7" spellcheck="false" placeholder='{"data.channel": "email"}'>${text}</textarea>
<fieldset class="row"><legend>Try it on</legend>
<label for="filter-type">a sample of</label>
<select id="filter-type" name="type">${e.events.map((t) => html`<option value="${t}"${t === chosen ? html` selected` : ""}>${t}</option>`)}</select>
<label for="filter-event">or the stored event</label>
<input id="filter-event" name="event_id" type="text" maxlength="68" spellcheck="false" value="${draft?.eventId ?? ""}" placeholder="evt_…" />
</fieldset>
<div class="row"><button type="submit" formaction="${action("filter-test")}" class="secondary">Test filter</button>
<button type="submit">Save filter</button></div>
<p class="muted small">Testing sends and stores nothing. Only events that match are delivered; one that does not gets no delivery record.</p>
</form>
${test ? verdict(test, saved) : ""}</section>`;
}

/** The draft's filter as compact JSON, to compare with the stored one; null when it does not parse. */
function parseSafely(text: string): string | null {
  try {
    return JSON.stringify(parseFilterText(text));
  } catch {
    return null;
  }
}
