import { html } from "hono/html";
import type { ErasureRecord } from "../../../../app/ports/erasures.ts";
import type { SettingsView } from "../../../../app/settings.ts";
import { DomainError } from "../../../../domain/errors.ts";
import { UUID_PATTERN } from "../../../../domain/ids.ts";
import { formatDuration } from "../../../../domain/time.ts";
import type { C, PageContext, PageRoutes } from "../context.ts";
import { field } from "../forms.ts";
import { csrfField, type Html, time } from "../view.ts";

/** Retention and erasure for the project (console only: a customer portal never sees this page). */
export function privacyPage(
  base: string,
  csrf: string,
  settings: SettingsView,
  erasures: ErasureRecord[],
  done: ErasureRecord | null,
): Html {
  const own = settings.retentionMs === null ? "" : formatDuration(settings.retentionMs);
  return html`<h1>Privacy</h1>
${
  done
    ? html`<p class="notice" role="status" id="erasure-result">Erased ${done.eventsErased} ${done.eventsErased === 1 ? "event" : "events"} and ${done.deliveriesErased} delivery ${done.deliveriesErased === 1 ? "record" : "records"} (${done.deliveriesCancelled} pending, now cancelled). Erasure <code>${done.id}</code>.</p>`
    : ""
}
<section aria-labelledby="h-retention"><h2 id="h-retention">Retention</h2>
<p>This project's events, delivery records and erasure records are kept for <strong>${formatDuration(settings.effectiveRetentionMs)}</strong>${settings.retentionMs === null ? html` (the server's <code>HERALD_RETENTION</code>)` : ""}, then deleted by the hourly retention job.</p>
<form method="post" action="${base}/privacy/retention" class="row">${csrfField(csrf)}
<label for="retention">Keep for</label>
<input id="retention" name="retention" type="text" value="${own}" placeholder="${formatDuration(settings.maxRetentionMs)}" aria-describedby="retention-help" />
<button type="submit">Save retention</button>
<p id="retention-help" class="muted small">A duration like 12h or 7d, at most ${formatDuration(settings.maxRetentionMs)} (the server's limit). Leave it empty to follow the server's.</p>
</form></section>

<section aria-labelledby="h-erase"><h2 id="h-erase">Erase a subject</h2>
<p>Deletes every stored event of this project about one message or domain, or one recipient, and removes the receivers' answers from their delivery records. Deliveries still pending are cancelled and never sent. This cannot be undone.</p>
<form method="post" action="${base}/privacy/erase" class="stack">${csrfField(csrf)}
<label for="resource_id">Resource id <span class="muted small">(a message's or a domain's id)</span></label>
<input id="resource_id" name="resource_id" type="text" spellcheck="false" autocomplete="off" placeholder="6f1c2b9e-8a44-4c1e-9a53-0d5b2f7e1a10" />
<label for="recipient">or recipient <span class="muted small">(compared without regard to case)</span></label>
<input id="recipient" name="recipient" type="text" spellcheck="false" autocomplete="off" placeholder="ada@example.com" />
<label class="check"><input type="checkbox" name="confirm" value="yes" required /> Yes, erase these events for good</label>
<button type="submit" class="danger">Erase</button>
</form></section>

<section aria-labelledby="h-erasures"><h2 id="h-erasures">Recent erasures</h2>
${
  erasures.length === 0
    ? html`<p class="empty">No erasure yet.</p>`
    : html`<table><caption class="sr">Erasures, newest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">Subject</th><th scope="col" class="num">Events</th><th scope="col" class="num">Delivery records</th><th scope="col" class="num">Cancelled</th></tr></thead>
<tbody>${erasures.map(
        (e) =>
          html`<tr><td>${time(e.createdAt)}</td><td>${e.subject === "resource_id" ? html`<code>${e.resourceId}</code>` : "a recipient"}</td><td class="num">${e.eventsErased}</td><td class="num">${e.deliveriesErased}</td><td class="num">${e.deliveriesCancelled}</td></tr>`,
      )}</tbody></table>`
}</section>`;
}

/** The privacy page (console only): retention and erasure. */
export const privacyRoutes: PageRoutes = (r, p) => {
  r.get(
    "/privacy",
    p.guarded(async (c) => {
      const id = c.req.query("erasure") ?? "";
      // Another project's erasure (or none) is simply not shown.
      const done = UUID_PATTERN.test(id)
        ? await p.deps.erasures.get(c.var.session.scope, id.toLowerCase()).catch((e: unknown) => {
            if (e instanceof DomainError && e.kind === "not_found") return null;
            throw e;
          })
        : null;
      return showPrivacy(p, c, done);
    }),
  );
  r.post(
    "/privacy/retention",
    p.guarded(async (c) => {
      const retention = field(await p.form(c), "retention");
      await p.deps.settings.update(c.var.session.scope, { retention: retention === "" ? null : retention });
      return p.redirect(c, "/privacy?notice=retention");
    }),
  );
  r.post(
    "/privacy/erase",
    p.guarded(async (c) => {
      const f = await p.form(c);
      if (field(f, "confirm") !== "yes") {
        throw new DomainError("validation_failed", "Tick the box to confirm the erasure.", [
          { path: "confirm", message: "must be ticked" },
        ]);
      }
      const resourceId = field(f, "resource_id");
      const recipient = field(f, "recipient");
      const done = await p.deps.erasures.create(c.var.session.scope, {
        resourceId: resourceId === "" ? undefined : resourceId,
        recipient: recipient === "" ? undefined : recipient,
      });
      // Post/Redirect/Get: the result is the erasure's record, read again by the page the redirect leads to.
      return p.redirect(c, `/privacy?erasure=${done.id}`);
    }),
  );
};

async function showPrivacy(p: PageContext, c: C, done: ErasureRecord | null = null): Promise<Response> {
  const scope = c.var.session.scope;
  const [settings, erasures] = await Promise.all([
    p.deps.settings.get(scope),
    p.deps.erasures.list(scope, { limit: 20, cursor: null }),
  ]);
  return p.render(
    c,
    p.frame(c, "Privacy", "privacy"),
    privacyPage(p.base, c.var.session.csrfToken, settings, erasures.data, done),
  );
}
