import { html } from "hono/html";
import type { DestinationKind } from "../../../../domain/destination.ts";
import { DEFAULT_SIGNATURE_SCHEME, SIGNATURE_SCHEMES } from "../../../../domain/signature-scheme.ts";
import { problemFromError, statusOf } from "../../problem.ts";
import type { PageRoutes } from "../context.ts";
import { eventTypes, field, fields, parseRateLimitField } from "../forms.ts";
import { csrfField, type Html } from "../view.ts";
import { type FieldErrors, fieldError } from "./destination-fields.ts";
import { type Draft, draftOf, fieldIssues, kindOf, newDestinationOf } from "./destination-form.ts";
import { kindChoiceAndFields } from "./endpoint-new-destination.ts";
import { SCHEME_WORDS } from "./endpoint-scheme.ts";
import { showSecretOnce } from "./endpoint-secret.ts";
import { eventChoices, orderingSelect, rateLimitInput } from "./endpoint-settings.ts";

/** The new endpoint form as typed (never a credential), and its issues by field. */
export interface NewEndpointView {
  kind: DestinationKind;
  draft: Draft;
  events: string[];
  errors: FieldErrors;
}

const EMPTY: NewEndpointView = { kind: "https", draft: {}, events: [], errors: new Map() };

/** The form for a new endpoint (console only): its kind and destination, then what every endpoint has. */
export function newEndpointPage(base: string, csrf: string, view: NewEndpointView = EMPTY): Html {
  const { draft, errors } = view;
  const scheme = draft.signature_scheme || DEFAULT_SIGNATURE_SCHEME;
  return html`<h1>New endpoint</h1>
<form method="post" action="${base}/endpoints" class="stack">
${csrfField(csrf)}
${kindChoiceAndFields(view.kind, { values: draft, errors })}
<label for="description">Description <span class="muted small">(optional)</span></label>
<input id="description" name="description" type="text" maxlength="1024" value="${draft.description ?? ""}" />
${fieldError(errors, "description")}
${rateLimitInput(draft.rate_limit ?? "")}
${fieldError(errors, "rate_limit")}
${orderingSelect(draft.ordering === "fifo" ? "fifo" : "none")}
<label for="signature_scheme">Signature scheme</label>
<select id="signature_scheme" name="signature_scheme" aria-describedby="scheme-help">${Object.entries(
    SCHEME_WORDS,
  ).map(([s]) => html`<option value="${s}"${s === scheme ? html` selected` : ""}>${s}</option>`)}</select>
<p id="scheme-help" class="muted small">${Object.entries(SCHEME_WORDS).map(([s, words]) => html`<code>${s}</code>: ${words}. `)}Custom headers and a payload filter are set on the endpoint's page once it exists.</p>
${eventChoices(view.events)}
${fieldError(errors, "events")}
<button type="submit">Create endpoint</button>
</form>`;
}

/** The new endpoint form and its answer (console only: the portal cannot add endpoints). */
export const newEndpointRoutes: PageRoutes = (r, p) => {
  const { deps, base } = p;
  r.get("/endpoints/new", (c) => {
    // `?kind=kafka` opens the form on that kind (a link to it, or the page without a script).
    const asked = c.req.query("kind");
    const kind = (["kafka", "rabbitmq", "sqs"] as const).find((k) => k === asked) ?? "https";
    return p.render(
      c,
      p.frame(c, "New endpoint", "new"),
      newEndpointPage(base, c.var.session.csrfToken, { ...EMPTY, kind }),
    );
  });
  r.post(
    "/endpoints",
    p.guarded(async (c) => {
      const f = await p.form(c);
      const events = fields(f, "events");
      let kind: DestinationKind = "https";
      try {
        kind = kindOf(f);
        const destination = newDestinationOf(f, kind);
        const { endpoint, secret } = await deps.endpoints.create(c.var.session.scope, {
          // A broker endpoint's url is derived from its destination: the URL box is not read.
          url: destination ? undefined : field(f, "url"),
          destination,
          events: eventTypes(events),
          description: field(f, "description") || null,
          rateLimit: parseRateLimitField(field(f, "rate_limit")),
          ordering: field(f, "ordering") === "fifo" ? "fifo" : "none",
          signatureScheme: SIGNATURE_SCHEMES.find((s) => s === field(f, "signature_scheme")),
        });
        // Post/Redirect/Get: a reload shows the secret page again, never posts the form again.
        return showSecretOnce(c, p, endpoint.id, secret, "created");
      } catch (e) {
        const problem = problemFromError(e);
        if (!problem) throw e;
        const issues = problem.errors?.map((i) => `${i.path}: ${i.message}`).join("; ");
        // The form again as typed, each issue beside its field; the password boxes empty (retyped).
        return p.render(
          c,
          {
            ...p.frame(c, "New endpoint", "new"),
            error: issues ? `${problem.detail} ${issues}.` : problem.detail,
          },
          newEndpointPage(base, c.var.session.csrfToken, {
            kind,
            draft: draftOf(f),
            events,
            errors: fieldIssues(problem.errors ?? []),
          }),
          statusOf(problem.code),
        );
      }
    }),
  );
};
