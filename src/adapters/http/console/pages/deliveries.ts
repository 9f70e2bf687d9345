import { html } from "hono/html";
import type { SentRequest } from "../../../../app/console-insights.ts";
import type { DeliveryFilter } from "../../../../app/ports/deliveries.ts";
import { HEADER_VALUE_MASK } from "../../../../domain/custom-headers.ts";
import { DELIVERY_STATUSES, type Delivery, type DeliveryStatus } from "../../../../domain/delivery.ts";
import type { Endpoint } from "../../../../domain/endpoint.ts";
import { EVENT_TYPES, isEventType } from "../../../../domain/event-catalog.ts";
import { isoMillis } from "../../../../domain/time.ts";
import { decodeCursor, encodeCursor } from "../../cursor.ts";
import { type PageRoutes, param } from "../context.ts";
import { parseMoment } from "../forms.ts";
import { csrfField, type Html, query, statusBadge, time } from "../view.ts";
import { receiptText } from "./endpoint-destination.ts";

export interface DeliveryQuery {
  webhook_id?: string | undefined;
  status?: string | undefined;
  event_type?: string | undefined;
  event_id?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  cursor?: string | undefined;
}

const option = (value: string, label: string, selected: string | undefined) =>
  html`<option value="${value}"${value === (selected ?? "") ? html` selected` : ""}>${label}</option>`;

export function deliveryRow(base: string, d: Delivery, endpointUrl: string | undefined): Html {
  return html`<tr data-id="${d.id}">
<td>${time(d.createdAt)}</td>
<td>${statusBadge(d.status)}${d.erasedAt ? html` <span class="muted small">erased</span>` : ""}</td>
<td><a href="${base}/events/${d.eventId}">${d.eventType}</a></td>
<td class="small"><a href="${base}/endpoints/${d.webhookId}">${endpointUrl ?? d.webhookId}</a></td>
<td class="num">${d.attempt}${d.trigger === "manual" ? html` <span class="muted small">manual</span>` : ""}</td>
<td class="num">${d.responseStatus ?? "—"}</td>
<td>${d.error ?? ""}</td>
<td><a href="${base}/deliveries/${d.id}" aria-label="Details of attempt ${d.attempt} of ${d.eventType}">Details</a></td>
</tr>`;
}

export function deliveryTable(base: string, items: Delivery[], urls: Map<string, string>, id?: string): Html {
  return html`<table${id ? html` id="${id}"` : ""}>
<caption class="sr">Delivery attempts, newest first</caption>
<thead><tr><th scope="col">Created</th><th scope="col">Status</th><th scope="col">Event</th><th scope="col">Endpoint</th><th scope="col" class="num">Attempt</th><th scope="col" class="num">HTTP</th><th scope="col">Error</th><th scope="col"><span class="sr">Link</span></th></tr></thead>
<tbody>${items.map((d) => deliveryRow(base, d, urls.get(d.webhookId)))}</tbody></table>`;
}

export function deliveriesPage(
  base: string,
  q: DeliveryQuery,
  endpoints: Endpoint[],
  items: Delivery[],
  nextCursor: string | null,
): Html {
  const urls = new Map(endpoints.map((e) => [e.id, e.url]));
  const filtered = Boolean(q.status || q.event_type || q.event_id || q.since || q.until);
  const empty = filtered
    ? html`<div class="empty"><p>No deliveries match these filters.</p><p><a href="${base}/deliveries${query({ webhook_id: q.webhook_id })}">Clear the filters</a> or widen the time range.</p></div>`
    : html`<div class="empty"><p>No deliveries yet.</p><p>Deliveries appear when an event is published for a subscribed endpoint. Send a test event from an <a href="${base}">endpoint's page</a>.</p></div>`;
  return html`<h1>Deliveries</h1>
<form method="get" action="${base}/deliveries" class="filters" aria-label="Filter deliveries">
<div><label for="f-endpoint">Endpoint</label>
<select id="f-endpoint" name="webhook_id">${option("", "all endpoints", q.webhook_id)}${endpoints.map((e) => option(e.id, e.url, q.webhook_id))}</select></div>
<div><label for="f-status">Status</label>
<select id="f-status" name="status">${option("", "any", q.status)}${DELIVERY_STATUSES.map((s) => option(s, s, q.status))}</select></div>
<div><label for="f-type">Event type</label>
<select id="f-type" name="event_type">${option("", "any", q.event_type)}${EVENT_TYPES.map((t) => option(t, t, q.event_type))}</select></div>
<div><label for="f-event">Event id</label>
<input id="f-event" name="event_id" type="text" value="${q.event_id ?? ""}" placeholder="evt_…" /></div>
<div><label for="f-since">Since</label>
<input id="f-since" name="since" type="text" value="${q.since ?? ""}" placeholder="24h or UTC time" /></div>
<div><label for="f-until">Until</label>
<input id="f-until" name="until" type="text" value="${q.until ?? ""}" placeholder="now" /></div>
<button type="submit">Filter</button>
</form>
${items.length === 0 ? empty : deliveryTable(base, items, urls)}
${nextCursor ? html`<p><a class="button secondary" rel="next" href="${base}/deliveries${query({ ...q, cursor: nextCursor })}">Older deliveries</a></p>` : ""}`;
}

export function deliveryDetailPage(
  base: string,
  csrf: string,
  d: Delivery,
  endpoint: Endpoint | null,
  sent: SentRequest | null,
  timeline: Delivery[],
): Html {
  const request = sent
    ? sentRequest(sent, d, endpoint)
    : html`<p class="muted">${d.erasedAt ? "The event was erased." : d.attemptedAt ? "The event or endpoint is no longer retained." : "Not sent yet."}</p>`;
  // An erased record is never sent again: no retry button, and what it held is said to be gone.
  const retry = d.erasedAt
    ? ""
    : html`<form method="post" action="${base}/deliveries/${d.id}/retry">${csrfField(csrf)}<button type="submit">Retry now</button></form>`;
  // A page showing a pending attempt follows it on the live channel (assets/app.js swaps in the new page).
  const pending = d.status === "pending" || timeline.some((a) => a.status === "pending");
  const follow = pending
    ? html`<p class="muted small" id="follow-state" role="status" aria-live="polite" data-follow="${base}/live/stream?delivery=${d.id}" data-attempt="${d.id}" data-state="${attemptState(d)}">This page updates by itself when the pending attempt is recorded.</p>`
    : "";
  return html`<div class="head"><h1>Delivery attempt ${d.attempt}</h1>
${retry}</div>
${follow}
${d.erasedAt ? html`<p class="notice" role="note">Erased ${time(d.erasedAt)}: this attempt's event and the receiver's answer were removed${d.status === "cancelled" && d.attemptedAt === null ? ", and it was cancelled before it was sent" : ""}. It is never sent again.</p>` : ""}
<dl class="props">
<dt>Status</dt><dd>${statusBadge(d.status)} ${d.trigger === "manual" ? "(manual)" : "(automatic)"}</dd>
<dt>Event</dt><dd><a href="${base}/events/${d.eventId}">${d.eventType} · ${d.eventId}</a></dd>
<dt>Endpoint</dt><dd><a href="${base}/endpoints/${d.webhookId}">${endpoint?.url ?? d.webhookId}</a></dd>
<dt>Response status</dt><dd>${d.responseStatus ?? "—"}</dd>
${d.receipt ? html`<dt>Receipt</dt><dd>${receiptText(d.receipt)} <span class="muted small">(what the broker answered when it stored the message)</span></dd>` : ""}
<dt>Error</dt><dd>${d.error ? html`<code>${d.error}</code> — ${ERROR_TEXT[d.error] ?? ""}` : "none"}</dd>
<dt>Duration</dt><dd>${d.durationMs === null ? "—" : `${d.durationMs} ms`}</dd>
<dt>Scheduled</dt><dd>${time(d.scheduledAt)}</dd>
<dt>Attempted</dt><dd>${time(d.attemptedAt, "not yet")}</dd>
<dt>Next attempt</dt><dd>${time(d.nextAttemptAt, "none")}</dd>
</dl>
<h2>Response body <span class="muted small">(first 4 KiB)</span></h2>
${d.responseBody ? html`<pre class="code" tabindex="0">${d.responseBody}</pre>` : html`<p class="muted">${d.erasedAt ? "Removed by the erasure." : "No body recorded."}</p>`}
<h2>Request sent</h2>
${request}
<h2>Every attempt of this event to this endpoint</h2>
<ol class="timeline">${timeline.map(
    (a) =>
      html`<li data-attempt="${a.id}" data-state="${attemptState(a)}"${a.id === d.id ? html` aria-current="true"` : ""}><a href="${base}/deliveries/${a.id}">Attempt ${a.attempt}</a> ${statusBadge(a.status)} ${a.trigger} · scheduled ${time(a.scheduledAt)} · attempted ${time(a.attemptedAt, "not yet")}${a.responseStatus ? ` · HTTP ${a.responseStatus}` : ""}${a.error ? ` · ${a.error}` : ""}${a.durationMs !== null ? ` · ${a.durationMs} ms` : ""}</li>`,
  )}</ol>`;
}

/** What the live channel compares to tell that an attempt changed: its status and attempt time. */
const attemptState = (d: Delivery): string => `${d.status} ${d.attemptedAt ? isoMillis(d.attemptedAt) : ""}`;

/**
 * The request an attempt sent: its line and headers, then the body exactly as sent (the bytes the
 * signature covers; a formatted view sits beside it), and what of it is rebuilt rather than recorded.
 */
function sentRequest(sent: SentRequest, d: Delivery, endpoint: Endpoint | null): Html {
  const bytes = new TextEncoder().encode(sent.body).length;
  const pretty = prettyJson(sent.body);
  // A record keeps its attempt's scheme and custom header names; one written before they were kept does
  // not: say what is rebuilt, and when the endpoint changed after the attempt, that its settings then may
  // have been other than these.
  const changedSince =
    !sent.asRecorded && endpoint && d.attemptedAt && endpoint.updatedAt.getTime() > d.attemptedAt.getTime()
      ? html` <strong>This endpoint was changed after this attempt</strong> (${time(endpoint.updatedAt)}), so the scheme, headers or secrets in force then may have differed from these.`
      : "";
  const inForce = sent.asRecorded
    ? html`Herald records each attempt's URL, time, signature scheme and custom header names: the headers are rebuilt from them. The signature is recomputed under the scheme in force for this attempt (<code>${d.signatureScheme}</code>), over the body above, with the secrets that were active at the attempt's time; the custom headers listed are those this attempt sent.`
    : html`Herald records each attempt's URL and time, not its headers: the headers are rebuilt. The signature is recomputed over the body above with the secrets that were active at the attempt's time. <strong>The record does not say which signature scheme and custom headers were in force for this attempt</strong>: those shown are the endpoint's current ones.`;
  return html`<pre class="code" id="request-head" tabindex="0" aria-label="Request line and headers">${
    // A broker message carries the same headers as record headers, AMQP headers or SQS attributes.
    endpoint?.destination ? `${endpoint.destination.kind} message to` : "POST"
  } ${sent.url}
${sent.headers.map(([k, v], i) => `${k}: ${v}${i < sent.headers.length - 1 ? "\n" : ""}`)}</pre>
<div class="secret"><span>Body, exactly as sent: <strong>${bytes}</strong> bytes</span> <button type="button" data-copy="request-body">Copy body</button></div>
<pre class="code raw" id="request-body" data-raw tabindex="0" aria-label="Body as sent">
${sent.body}</pre>
${pretty === sent.body ? "" : html`<details><summary>Formatted view <span class="muted small">(for reading: not the bytes sent)</span></summary><pre class="code" tabindex="0">${pretty}</pre></details>`}
<p class="muted small" id="request-note">${inForce}${changedSince} Secrets are never shown, nor custom header values (${HEADER_VALUE_MASK}).</p>`;
}

const ERROR_TEXT: Record<string, string> = {
  timeout: "the endpoint did not answer within the delivery timeout",
  connection_error: "the connection was refused or dropped",
  dns_error: "the host name could not be resolved",
  tls_error: "the TLS handshake failed (certificate or protocol)",
  blocked_address: "the host resolves to a private or reserved address, which Herald refuses",
  http_status: "the endpoint answered with a status that is not 2xx",
  redirect: "the endpoint answered with a redirect, which Herald never follows",
  auth_error: "the broker refused the credentials",
  destination_not_found: "the topic, exchange or queue does not exist",
  unroutable: "RabbitMQ returned the message: no queue is bound for its routing key",
  broker_rejected: "the broker refused this message",
  message_too_large: "the message is over the broker's size limit",
  superseded:
    "another attempt of this event to this endpoint succeeded first, so this automatic attempt was cancelled and never sent",
};

/** JSON formatted for reading; text that is not JSON is shown as it is. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** GET /deliveries (filtered, paged), GET /deliveries/:id and its "Retry now". */
export const deliveryRoutes: PageRoutes = (r, p) => {
  const { insights } = p.cd;

  r.get(
    "/deliveries",
    p.guarded(async (c) => {
      const q = c.req.query() as DeliveryQuery;
      const now = new Date();
      const filter: DeliveryFilter = {
        status: DELIVERY_STATUSES.includes(q.status as DeliveryStatus)
          ? (q.status as DeliveryStatus)
          : undefined,
        eventType: q.event_type && isEventType(q.event_type) ? q.event_type : undefined,
        eventId: q.event_id?.trim() || undefined,
        since: parseMoment(q.since, now, "since"),
        until: parseMoment(q.until, now, "until"),
      };
      const pageRequest = { limit: 50, cursor: decodeCursor(q.cursor || undefined) };
      const endpoints = await p.visibleEndpoints(c);
      const result = q.webhook_id
        ? await p
            .endpointOf(c, q.webhook_id)
            .then((e) => p.deps.deliveries.list(c.var.session.scope, e.id, filter, pageRequest))
        : await insights.list(p.reach(c), filter, pageRequest);
      return p.render(
        c,
        p.frame(c, "Deliveries", "deliveries"),
        deliveriesPage(p.base, q, endpoints, result.data, result.next ? encodeCursor(result.next) : null),
      );
    }),
  );

  r.get(
    "/deliveries/:id",
    p.guarded(async (c) => {
      const d = await p.deliveryOf(c, param(c, "id"));
      const scope = c.var.session.scope;
      const [endpoint, sent, timeline] = await Promise.all([
        p.deps.endpoints.get(scope, d.webhookId).catch(() => null),
        insights.sentRequest(scope, d),
        insights.timeline(p.reach(c), d),
      ]);
      return p.render(
        c,
        p.frame(c, `Delivery ${d.attempt} of ${d.eventType}`, "deliveries"),
        deliveryDetailPage(p.base, c.var.session.csrfToken, d, endpoint, sent, timeline),
      );
    }),
  );

  r.post(
    "/deliveries/:id/retry",
    p.guarded(async (c) => {
      const d = await p.deliveryOf(c, param(c, "id"));
      const next = await p.deps.deliveries.retry(c.var.session.scope, d.id);
      return p.redirect(c, `/deliveries/${next.id}?notice=retried`);
    }),
  );
};
