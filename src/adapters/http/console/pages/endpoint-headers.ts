import { html } from "hono/html";
import { HEADER_VALUE_MASK, MAX_CUSTOM_HEADERS } from "../../../../domain/custom-headers.ts";
import type { Endpoint } from "../../../../domain/endpoint.ts";
import { invalid, type ValidationIssue } from "../../../../domain/errors.ts";
import { type Form, field } from "../forms.ts";
import { csrfField, type Html } from "../view.ts";

/** Empty rows offered for new headers: a page without script cannot add rows, so a few are there. */
const NEW_ROWS = 2;

/**
 * The custom headers form. Values are write-only (ADR 13): each row shows the mask and an empty
 * password box, never a value, so no page (nor its re-render after an error) holds one. A blank box
 * keeps the stored value; removing a header is its own tick box.
 */
export function headersSection(action: string, csrf: string, e: Endpoint): Html {
  const free = Math.min(NEW_ROWS, MAX_CUSTOM_HEADERS - e.headers.length);
  const valueBox = (i: number, label: string, placeholder: string) =>
    html`<input type="password" name="header_${i}_value" aria-label="${label}" maxlength="4096" autocomplete="off" spellcheck="false" placeholder="${placeholder}" />`;
  return html`<section aria-labelledby="h-headers"><h2 id="h-headers">Custom headers</h2>
<p class="muted small">Sent with every delivery (an API key, a routing hint). Values are write-only: encrypted at rest and shown as <code>${HEADER_VALUE_MASK}</code>. Leave a value blank to keep it; tick Remove to delete a header.</p>
<form method="post" action="${action}" class="stack wide">${csrfField(csrf)}
<table><caption class="sr">Custom headers</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Value</th><th scope="col">Remove</th></tr></thead>
<tbody>${e.headers.map(
    (h, i) =>
      html`<tr><th scope="row"><code>${h.name}</code><input type="hidden" name="header_${i}_name" value="${h.name}" /><input type="hidden" name="header_${i}_stored" value="yes" /></th>
<td>${valueBox(i, `New value for ${h.name}`, `${HEADER_VALUE_MASK} (blank keeps it)`)}</td>
<td><label class="check"><input type="checkbox" name="header_${i}_remove" value="yes" aria-label="Remove ${h.name}" /> Remove</label></td></tr>`,
  )}${Array.from({ length: free }, (_, k) => {
    const i = e.headers.length + k;
    return html`<tr><td><input type="text" name="header_${i}_name" aria-label="New header name" maxlength="128" autocomplete="off" spellcheck="false" placeholder="New header, e.g. Authorization" /></td>
<td>${valueBox(i, "New header value", "its value")}</td><td></td></tr>`;
  })}</tbody></table>
${free === 0 ? html`<p class="muted small">An endpoint has at most ${MAX_CUSTOM_HEADERS} custom headers: remove one to add another.</p>` : ""}
<button type="submit">Save headers</button></form></section>`;
}

/**
 * The merge patch (ADR 13) the headers form asks for: a value typed sets a header, a ticked Remove
 * removes it, a blank value keeps it. Null when the form changes nothing. Messages name headers,
 * never a value.
 */
export function headerChangeOf(form: Form): Record<string, string | null> | null {
  const change: Record<string, string | null> = {};
  const issues: ValidationIssue[] = [];
  const rows = Object.keys(form)
    .map((k) => /^header_(\d{1,3})_name$/.exec(k)?.[1])
    .filter((i): i is string => i !== undefined);
  for (const i of rows) {
    const name = field(form, `header_${i}_name`);
    const value = field(form, `header_${i}_value`);
    const remove = field(form, `header_${i}_remove`) === "yes";
    const stored = field(form, `header_${i}_stored`) === "yes";
    if (!name) {
      if (value) issues.push({ path: "headers", message: "a value was given without a header name" });
      continue;
    }
    if (name === "__proto__") {
      // As the API: a name a plain object cannot hold as data is refused, not silently lost.
      issues.push({ path: `headers.${name}`, message: "is not a header name Herald can keep" });
    } else if (Object.hasOwn(change, name)) {
      issues.push({ path: `headers.${name}`, message: "is named twice in the form" });
    } else if (remove) change[name] = null;
    else if (value) change[name] = value;
    // A new row's name with no value: silently dropping it would look like a save.
    else if (!stored)
      issues.push({ path: `headers.${name}`, message: "needs a value: a new header cannot be blank" });
  }
  if (issues.length) throw invalid(issues);
  return Object.keys(change).length === 0 ? null : change;
}
