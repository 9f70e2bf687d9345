import { html } from "hono/html";
import { HEADER_VALUE_MASK } from "../../../../domain/custom-headers.ts";
import type { Endpoint, Ordering } from "../../../../domain/endpoint.ts";
import { DomainError, notFound } from "../../../../domain/errors.ts";
import {
  type EventType,
  isEventType,
  OPERATIONAL_EVENT_TYPES,
  PUBLISHED_EVENT_TYPES,
} from "../../../../domain/event-catalog.ts";
import { rateLimitText } from "../../../../domain/rate-limit.ts";
import {
  DEFAULT_SIGNATURE_SCHEME,
  keyKind,
  SIGNATURE_SCHEMES,
  type SignatureScheme,
} from "../../../../domain/signature-scheme.ts";
import { isoMillis } from "../../../../domain/time.ts";
import { problemFromError, statusOf } from "../../problem.ts";
import { type C, type PageContext, type PageRoutes, param } from "../context.ts";
import { type Flash, setFlash, takeFlash } from "../flash.ts";
import { eventTypes, field, fields, parseMoment, parseOrderingField, parseRateLimitField } from "../forms.ts";
import { csrfField, type Html, time } from "../view.ts";
import { certificateChangeOf, certificateFacts, certificateSection } from "./endpoint-certificate.ts";
import {
  draftOf,
  type FilterDraft,
  type FilterTestView,
  filterSection,
  filterTestPath,
  parseFilterText,
  runFilterTest,
} from "./endpoint-filter.ts";
import { headerChangeOf, headersSection } from "./endpoint-headers.ts";
import { SCHEME_WORDS, schemeChangeOf, schemeHeaders, schemeSection } from "./endpoint-scheme.ts";
import { messagePage } from "./message.ts";

function eventChoices(selected: readonly string[]): Html {
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
  values?: {
    url?: string;
    description?: string;
    events?: string[];
    rateLimit?: string;
    ordering?: Ordering;
    signatureScheme?: SignatureScheme;
  },
): Html {
  const scheme = values?.signatureScheme ?? DEFAULT_SIGNATURE_SCHEME;
  return html`<h1>New endpoint</h1>
<form method="post" action="${base}/endpoints" class="stack">
${csrfField(csrf)}
<label for="url">URL <span class="muted small">(https://…, where Herald will POST each event)</span></label>
<input id="url" name="url" type="url" required maxlength="2048" value="${values?.url ?? ""}" placeholder="https://example.com/webhooks/herald" />
<label for="description">Description <span class="muted small">(optional)</span></label>
<input id="description" name="description" type="text" maxlength="1024" value="${values?.description ?? ""}" />
${rateLimitInput(values?.rateLimit ?? "")}
${orderingSelect(values?.ordering ?? "none")}
<label for="signature_scheme">Signature scheme</label>
<select id="signature_scheme" name="signature_scheme" aria-describedby="scheme-help">${Object.entries(
    SCHEME_WORDS,
  ).map(([s]) => html`<option value="${s}"${s === scheme ? html` selected` : ""}>${s}</option>`)}</select>
<p id="scheme-help" class="muted small">${Object.entries(SCHEME_WORDS).map(([s, words]) => html`<code>${s}</code>: ${words}. `)}Custom headers and a payload filter are set on the endpoint's page once it exists.</p>
${eventChoices(values?.events ?? [])}
<button type="submit">Create endpoint</button>
</form>`;
}

const SECRET_TITLES = {
  created: "Endpoint created",
  rotated: "New signing secret",
  switched: "Scheme changed",
};

/**
 * What the receiver verifies with, just issued (creation, rotation, a switch to another kind of
 * key): an HMAC secret, shown only this once; or an Ed25519 endpoint's public key, which is no secret
 * and stays on the endpoint's page.
 */
export function secretPage(
  base: string,
  e: Endpoint,
  secret: string,
  why: "created" | "rotated" | "switched",
): Html {
  const publicKey = secret.startsWith("whpk_");
  const title = publicKey && why === "rotated" ? "New key pair" : SECRET_TITLES[why];
  const header = html`<code>${schemeHeaders(e.signatureScheme).split(", ")[2]}</code>`;
  const what =
    why === "created"
      ? html`Herald will send ${e.events.join(", ")} to <strong>${e.url}</strong>, signed with <code>${e.signatureScheme}</code>.`
      : why === "rotated"
        ? publicKey
          ? "A new key pair was made."
          : "The secret was rotated."
        : html`Deliveries are now signed with <code>${e.signatureScheme}</code>; the previous ${publicKey ? "secret" : "key"} no longer signs.`;
  if (publicKey) {
    return html`<h1>${title}</h1>
<p>${what} Your receiver verifies the ${header} header's <code>v1a</code> signatures with this <strong>public key</strong>. It is not secret, and the endpoint's page shows it at any time; Herald keeps the private key and never shows it.</p>
<div class="secret"><code id="secret">${secret}</code> <button type="button" data-copy="secret">Copy</button></div>
<p><a class="button" href="${base}/endpoints/${e.id}">Continue to the endpoint</a></p>`;
  }
  return html`<h1>${title}</h1>
<p>${what}
Copy the signing secret now: <strong>it is shown only this once</strong>. Your receiver uses it to verify the ${header} header.</p>
<div class="secret"><code id="secret">${secret}</code> <button type="button" data-copy="secret">Copy</button></div>
<p><a class="button" href="${base}/endpoints/${e.id}">Continue to the endpoint</a></p>`;
}

/** What the endpoint page shows beside the endpoint itself. */
export interface EndpointView {
  /** The deliveries its ordering holds back (ADR 16). */
  held: number;
  /** An Ed25519 endpoint's public key; null for the HMAC schemes. */
  publicKey: string | null;
  /** The filter form as typed, when the page answers a test or a failed save. */
  filterDraft?: FilterDraft | null;
  filterTest?: FilterTestView | null;
}

export function endpointPage(base: string, csrf: string, e: Endpoint, view: EndpointView): Html {
  const { held } = view;
  const action = (path: string) => `${base}/endpoints/${e.id}/${path}`;
  const types = e.events as readonly EventType[];
  return html`<div class="head"><h1>Endpoint</h1><a class="button secondary" href="${base}/deliveries?webhook_id=${e.id}">Deliveries</a></div>
<dl class="props">
<dt>URL</dt><dd><code>${e.url}</code></dd>
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

<section aria-labelledby="h-edit"><h2 id="h-edit">Settings</h2>
<form method="post" action="${action("update")}" class="stack">${csrfField(csrf)}
<label for="url">URL</label><input id="url" name="url" type="url" required maxlength="2048" value="${e.url}" />
<label for="description">Description</label><input id="description" name="description" type="text" maxlength="1024" value="${e.description ?? ""}" />
${rateLimitInput(e.rateLimit ? rateLimitText(e.rateLimit) : "")}
${orderingSelect(e.ordering)}
${eventChoices(e.events)}
<button type="submit">Save settings</button></form></section>

${headersSection(action("headers"), csrf, e)}

${filterSection(action, csrf, e, view.filterDraft ?? null, view.filterTest ?? null)}

${schemeSection(action("scheme"), csrf, e)}

${certificateSection(action("certificate"), csrf, e)}

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
          signatureScheme: SIGNATURE_SCHEMES.find((s) => s === field(f, "signature_scheme")),
        };
        try {
          const { endpoint, secret } = await deps.endpoints.create(c.var.session.scope, {
            url: values.url,
            events: eventTypes(values.events),
            description: values.description || null,
            rateLimit: parseRateLimitField(values.rateLimit),
            ordering: values.ordering,
            signatureScheme: values.signatureScheme,
          });
          // Post/Redirect/Get: a reload shows the secret page again, never posts the form again.
          return showSecretOnce(c, p, endpoint.id, secret, "created");
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
          p.frame(c, SECRET_TITLES[flash.why] ?? "New secret"),
          secretPage(base, e, flash.secret, flash.why),
        );
      }
      if (keyKind(e.signatureScheme) === "ed25519") {
        // Nothing secret was shown: the public key stays readable on the endpoint's page.
        return p.render(
          c,
          p.frame(c, "Public key"),
          messagePage(
            "The public key is on the endpoint's page",
            "An Ed25519 endpoint's public key is not secret: the endpoint's page shows it at any time. Herald keeps the private key and never shows it.",
            { href: `${base}/endpoints/${e.id}`, label: "Continue to the endpoint" },
          ),
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
    p.guarded(async (c) => showEndpoint(c, p, await p.endpointOf(c, param(c, "id")))),
  );

  // A filter tried from the endpoint page (the answer to its Test button): the page with the verdict.
  r.get(
    "/endpoints/:id/filter-test",
    p.guarded(async (c) => {
      const e = await p.endpointOf(c, param(c, "id"));
      const draft = draftOf(c);
      try {
        return await showEndpoint(c, p, e, {
          filterDraft: draft,
          filterTest: await runFilterTest(c, p, e, draft),
        });
      } catch (err) {
        return formFailed(c, p, e, err, { filterDraft: draft });
      }
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
        case "headers":
          try {
            const headers = headerChangeOf(f);
            if (headers) await deps.endpoints.update(scope, e.id, { headers });
            return p.redirect(c, `/endpoints/${e.id}?notice=${headers ? "headers" : "unchanged"}`);
          } catch (err) {
            return formFailed(c, p, e, err);
          }
        case "certificate":
          try {
            const clientCertificate = certificateChangeOf(f);
            await deps.endpoints.update(scope, e.id, { clientCertificate });
            return p.redirect(
              c,
              `/endpoints/${e.id}?notice=${clientCertificate ? "certificate" : "certificate-removed"}`,
            );
          } catch (err) {
            return formFailed(c, p, e, err);
          }
        case "filter": {
          const draft = { text: field(f, "filter"), type: field(f, "type"), eventId: field(f, "event_id") };
          try {
            const filter = parseFilterText(draft.text);
            await deps.endpoints.update(scope, e.id, { filter });
            return p.redirect(c, `/endpoints/${e.id}?notice=${filter ? "filter" : "filter-removed"}`);
          } catch (err) {
            return formFailed(c, p, e, err, { filterDraft: draft });
          }
        }
        case "filter-test":
          try {
            return p.redirect(c, filterTestPath(e.id, f));
          } catch (err) {
            return formFailed(c, p, e, err, { filterDraft: { text: field(f, "filter") } });
          }
        case "scheme":
          try {
            const scheme = schemeChangeOf(f, e);
            const { endpoint, secret } = await deps.endpoints.change(scope, e.id, {
              signatureScheme: scheme,
            });
            if (secret === null) return p.redirect(c, `/endpoints/${e.id}?notice=scheme`);
            // A switch to another kind of key issued one: shown once, as after a rotation.
            return showSecretOnce(c, p, endpoint.id, secret, "switched");
          } catch (err) {
            return formFailed(c, p, e, err);
          }
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
          return showSecretOnce(c, p, endpoint.id, secret, "rotated");
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

/** The endpoint page, with what it shows beside the endpoint; a form's error above it when given. */
async function showEndpoint(
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
function formFailed(c: C, p: PageContext, e: Endpoint, error: unknown, extra: Partial<EndpointView> = {}) {
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

/** A key issued by a form, shown once: its flash goes to the endpoint's secret page, and the answer redirects there. */
async function showSecretOnce(
  c: C,
  p: PageContext,
  endpointId: string,
  secret: string,
  why: Flash["why"],
): Promise<Response> {
  const shown = `/endpoints/${endpointId}/secret`;
  await setFlash(c, p.mode, p.base + shown, { kind: "secret", endpointId, secret, why });
  return p.redirect(c, shown);
}
