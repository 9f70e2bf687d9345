import { html } from "hono/html";
import type { Delivery } from "../../../../domain/delivery.ts";
import type { Endpoint } from "../../../../domain/endpoint.ts";
import type { Envelope } from "../../../../domain/envelope.ts";
import { notFound } from "../../../../domain/errors.ts";
import { type PageRoutes, param } from "../context.ts";
import { type Html, statusBadge, time } from "../view.ts";
import { prettyJson } from "./deliveries.ts";

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

/** GET /events/:id: an event's envelope and the endpoints it went to. */
export const eventRoutes: PageRoutes = (r, p) => {
  r.get(
    "/events/:id",
    p.guarded(async (c) => {
      const id = param(c, "id");
      if (!/^evt_[A-Za-z0-9]{1,64}$/.test(id)) throw notFound("The event");
      const { envelope, body } = await p.cd.insights.envelope(c.var.session.scope, id);
      const latest = await p.cd.insights.fanout(p.reach(c), id);
      // A portal limited to some endpoints sees only events that reached them.
      if (c.var.session.webhookIds !== null && latest.length === 0) throw notFound("The event");
      const endpoints = new Map((await p.visibleEndpoints(c)).map((e) => [e.id, e]));
      return p.render(
        c,
        p.frame(c, `Event ${envelope.type}`),
        eventPage(p.base, envelope, body, latest, endpoints),
      );
    }),
  );
};
