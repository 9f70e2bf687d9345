import { html } from "hono/html";
import { HEADER_VALUE_MASK } from "../../../../domain/custom-headers.ts";
import type { Endpoint, Ordering } from "../../../../domain/endpoint.ts";
import { DomainError, notFound } from "../../../../domain/errors.ts";
import { EVENT_TYPES, type EventType, isEventType } from "../../../../domain/event-catalog.ts";
import { rateLimitText } from "../../../../domain/rate-limit.ts";
import { isoMillis } from "../../../../domain/time.ts";
import { problemFromError, statusOf } from "../../problem.ts";
import { type PageRoutes, param } from "../context.ts";
import { setFlash, takeFlash } from "../flash.ts";
import { eventTypes, field, fields, parseMoment, parseOrderingField, parseRateLimitField } from "../forms.ts";
import { csrfField, type Html, time } from "../view.ts";
import { messagePage } from "./message.ts";

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

/** The endpoint pages: a new endpoint (console only), an endpoint's settings, and its actions. */
export const endpointRoutes: PageRoutes = (r, p) => {
  const { deps, base } = p;

  if (p.mode === "console") {
    r.get("/endpoints/new", (c) =>
      p.render(c, p.frame(c, "New endpoint", "new"), newEndpointPage(base, c.var.session.csrfToken)),
    );
    r.post(
      "/endpoints",
      p.guarded(async (c) => {
        const f = await p.form(c);
        const values = {
          url: field(f, "url"),
          description: field(f, "description"),
          events: fields(f, "events"),
          rateLimit: field(f, "rate_limit"),
          ordering: field(f, "ordering") === "fifo" ? ("fifo" as const) : ("none" as const),
        };
        try {
          const { endpoint, secret } = await deps.endpoints.create(c.var.session.scope, {
            url: values.url,
            events: eventTypes(values.events),
            description: values.description || null,
            rateLimit: parseRateLimitField(values.rateLimit),
            ordering: values.ordering,
          });
          // Post/Redirect/Get: a reload shows the secret page again, never posts the form again.
          const shown = `/endpoints/${endpoint.id}/secret`;
          await setFlash(c, p.mode, base + shown, {
            kind: "secret",
            endpointId: endpoint.id,
            secret,
            rotated: false,
          });
          return p.redirect(c, shown);
        } catch (e) {
          const problem = problemFromError(e);
          if (!problem) throw e;
          const issues = problem.errors?.map((i) => `${i.path}: ${i.message}`).join("; ");
          return p.render(
            c,
            {
              ...p.frame(c, "New endpoint", "new"),
              error: issues ? `${problem.detail} ${issues}.` : problem.detail,
            },
            newEndpointPage(base, c.var.session.csrfToken, values),
            statusOf(problem.code),
          );
        }
      }),
    );
  }

  // The page after a creation or a rotation: the secret the flash carries, once; then only that it was shown.
  r.get(
    "/endpoints/:id/secret",
    p.guarded(async (c) => {
      const e = await p.endpointOf(c, param(c, "id"));
      const flash = await takeFlash(
        c,
        p.mode,
        `${base}/endpoints/${e.id}/secret`,
        (f) => f.kind === "secret" && f.endpointId === e.id,
      );
      if (flash) {
        return p.render(
          c,
          p.frame(c, flash.rotated ? "New secret" : "Endpoint created"),
          secretPage(base, e, flash.secret, flash.rotated),
        );
      }
      return p.render(
        c,
        p.frame(c, "Secret already shown"),
        messagePage(
          "This secret was shown once",
          "A signing secret is shown only on the page right after it is made, and only once. If you did not copy it, rotate the secret to make a new one.",
          { href: `${base}/endpoints/${e.id}`, label: "Continue to the endpoint" },
        ),
      );
    }),
  );

  // The page after a recovery: what it queued (the figures are in the address, so a reload shows them again).
  r.get(
    "/endpoints/:id/recovered",
    p.guarded(async (c) => {
      const e = await p.endpointOf(c, param(c, "id"));
      const queued = Number(c.req.query("queued"));
      const since = new Date(c.req.query("since") ?? "");
      const until = new Date(c.req.query("until") ?? "");
      if (
        !Number.isSafeInteger(queued) ||
        queued < 0 ||
        Number.isNaN(since.getTime()) ||
        Number.isNaN(until.getTime())
      )
        throw notFound("This page");
      return p.render(
        c,
        p.frame(c, "Recovery queued"),
        messagePage(
          "Recovery queued",
          `${queued} ${queued === 1 ? "delivery was" : "deliveries were"} queued again for events from ${isoMillis(since)} to ${isoMillis(until)} whose latest delivery failed or was skipped.`,
          { href: `${base}/deliveries?webhook_id=${e.id}`, label: "See the deliveries" },
        ),
      );
    }),
  );

  r.get(
    "/endpoints/:id",
    p.guarded(async (c) => {
      const e = await p.endpointOf(c, param(c, "id"));
      const held = (await deps.endpoints.held([e])).get(e.id);
      return p.render(c, p.frame(c, e.url), endpointPage(base, c.var.session.csrfToken, e, held));
    }),
  );

  r.post(
    "/endpoints/:id/:action",
    p.guarded(async (c) => {
      const e = await p.endpointOf(c, param(c, "id"));
      const scope = c.var.session.scope;
      const f = await p.form(c);
      switch (param(c, "action")) {
        case "update":
          await deps.endpoints.update(scope, e.id, {
            url: field(f, "url"),
            description: field(f, "description") || null,
            events: eventTypes(fields(f, "events")),
            // A form without the box (an older page) leaves the limit as it is.
            rateLimit: f.rate_limit === undefined ? undefined : parseRateLimitField(field(f, "rate_limit")),
            ordering: f.ordering === undefined ? undefined : parseOrderingField(field(f, "ordering")),
          });
          return p.redirect(c, `/endpoints/${e.id}?notice=saved`);
        case "enable":
          await deps.endpoints.enable(scope, e.id);
          return p.redirect(c, `/endpoints/${e.id}?notice=enabled`);
        case "disable":
          await deps.endpoints.update(scope, e.id, { enabled: false });
          return p.redirect(c, `/endpoints/${e.id}?notice=disabled`);
        case "delete":
          if (field(f, "confirm") !== "yes") {
            throw new DomainError("validation_failed", "Tick the box to confirm the deletion.", [
              { path: "confirm", message: "must be ticked" },
            ]);
          }
          await deps.endpoints.remove(scope, e.id);
          return c.redirect(`${base}?notice=deleted`, 303);
        case "rotate": {
          const grace = Number(field(f, "grace_period_seconds") || "0");
          if (!Number.isInteger(grace) || grace < 0 || grace > 604_800) {
            throw new DomainError("validation_failed", "The grace period is not valid.", [
              { path: "grace_period_seconds", message: "must be 0 to 604800 seconds" },
            ]);
          }
          const { endpoint, secret } = await deps.endpoints.rotate(scope, e.id, grace);
          const shown = `/endpoints/${endpoint.id}/secret`;
          await setFlash(c, p.mode, base + shown, {
            kind: "secret",
            endpointId: endpoint.id,
            secret,
            rotated: true,
          });
          return p.redirect(c, shown);
        }
        case "test": {
          const type = field(f, "type");
          const { delivery } = await deps.tools.sendTest(scope, e.id, isEventType(type) ? type : undefined);
          return p.redirect(c, `/deliveries/${delivery.id}?notice=tested`);
        }
        case "recover": {
          const now = new Date();
          const since = parseMoment(field(f, "since"), now, "since");
          if (!since) {
            throw new DomainError("validation_failed", "Say since when to recover.", [
              { path: "since", message: "is required" },
            ]);
          }
          const until = parseMoment(field(f, "until"), now, "until");
          const result = await deps.tools.recover(scope, e.id, since, until);
          const q = new URLSearchParams({
            queued: String(result.queued),
            since: isoMillis(result.since),
            until: isoMillis(result.until),
          });
          return p.redirect(c, `/endpoints/${e.id}/recovered?${q}`);
        }
        default:
          throw notFound("The action");
      }
    }),
  );
};
