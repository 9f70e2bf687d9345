import { html } from "hono/html";
import type { Ordering } from "../../../../domain/endpoint.ts";
import {
  DEFAULT_SIGNATURE_SCHEME,
  SIGNATURE_SCHEMES,
  type SignatureScheme,
} from "../../../../domain/signature-scheme.ts";
import { problemFromError, statusOf } from "../../problem.ts";
import type { PageRoutes } from "../context.ts";
import { eventTypes, field, fields, parseRateLimitField } from "../forms.ts";
import { csrfField, type Html } from "../view.ts";
import { SCHEME_WORDS } from "./endpoint-scheme.ts";
import { showSecretOnce } from "./endpoint-secret.ts";
import { eventChoices, orderingSelect, rateLimitInput } from "./endpoint-settings.ts";

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

/** The new endpoint form and its answer (console only: the portal cannot add endpoints). */
export const newEndpointRoutes: PageRoutes = (r, p) => {
  const { deps, base } = p;
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
};
