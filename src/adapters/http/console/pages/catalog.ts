import { z } from "@hono/zod-openapi";
import { html } from "hono/html";
import {
  EVENT_DATA_SCHEMAS,
  EVENT_DESCRIPTIONS,
  EVENT_TYPES,
  OPERATIONAL_EVENT_TYPES,
} from "../../../../domain/event-catalog.ts";
import { sampleEventData } from "../../../../domain/samples.ts";
import type { PageRoutes } from "../context.ts";
import type { Html } from "../view.ts";

export function catalogPage(): Html {
  const now = new Date("2026-11-21T10:00:00.000Z");
  return html`<h1>Event catalog</h1>
<p>Herald knows ${EVENT_TYPES.length} event types. Each delivery's body is an envelope whose <code>data</code> follows the type's schema below.</p>
<p>The last ${OPERATIONAL_EVENT_TYPES.length} are <strong>operational events</strong>: Herald sends them itself, about this project's endpoints (one disabled, failing for an hour, recovered, or an event given up), to the project's other endpoints subscribed to them, never to the endpoint they are about. Subscribe an endpoint of your alerting to them; they cannot be published.</p>
<nav aria-label="Event types" class="toc">${EVENT_TYPES.map((t) => html`<a href="#${t}">${t}</a> `)}</nav>
${EVENT_TYPES.map((t) => {
  const schema = z.toJSONSchema(EVENT_DATA_SCHEMAS[t], { unrepresentable: "any" });
  const sample = sampleEventData(t, { subjectId: "6f1c2b9e-8a44-4c1e-9a53-0d5b2f7e1a10" }, now);
  return html`<section id="${t}" aria-labelledby="h-${t}"><h2 id="h-${t}">${t}</h2><p>${EVENT_DESCRIPTIONS[t]}</p>
<details><summary>data schema</summary><pre class="code" tabindex="0">${JSON.stringify(schema, null, 2)}</pre></details>
<details open><summary>sample data</summary><pre class="code" tabindex="0">${JSON.stringify(sample, null, 2)}</pre></details></section>`;
})}`;
}

/** GET /catalog (console only): every event type, its data schema and a sample. */
export const catalogRoutes: PageRoutes = (r, p) => {
  r.get("/catalog", (c) => {
    c.header("Cache-Control", "private, max-age=300");
    return p.render(c, p.frame(c, "Event catalog", "catalog"), catalogPage());
  });
};
