// A broker endpoint's destination form (ADR 27): its settings to change, as a merge patch. Credential
// boxes are empty and blank keeps the stored one; removing SASL, a RabbitMQ password or an SQS session
// token is its own tick box. The kind is not offered: a different kind is a different endpoint.
import { html } from "hono/html";
import type { Endpoint } from "../../../../domain/endpoint.ts";
import { problemFromError } from "../../problem.ts";
import type { Form } from "../forms.ts";
import { csrfField, type Html } from "../view.ts";
import {
  destinationFields,
  draftOfDestination,
  type FieldErrors,
  fieldError,
  storedOf,
} from "./destination-fields.ts";
import { type Draft, draftOf, fieldIssues } from "./destination-form.ts";

/** The destination form as typed and its issues, when the page answers a failed save. */
export interface DestinationDraft {
  draft: Draft;
  errors: FieldErrors;
}

/** The section; "" for an HTTPS endpoint (its URL is in the settings). */
export function destinationSection(
  action: string,
  csrf: string,
  e: Endpoint,
  shown: DestinationDraft | null,
): Html | "" {
  const d = e.destination;
  if (!d) return "";
  const errors = shown?.errors ?? new Map();
  return html`<section aria-labelledby="h-destination"><h2 id="h-destination">Destination</h2>
<p class="muted small">Where this ${d.kind} endpoint's events go. Credentials are write-only: leave a password box blank to keep the stored one. Saving closes the connection Herald keeps for the endpoint; the next attempt opens one with these settings. The kind cannot change: a different kind is a different endpoint.</p>
<form method="post" action="${action}" class="stack">${csrfField(csrf)}
<input type="hidden" name="kind" value="${d.kind}" />
${fieldError(errors, "kind")}
${destinationFields(d.kind, { values: shown?.draft ?? draftOfDestination(d), errors, stored: storedOf(d) })}
${fieldError(errors, "headers")}
<button type="submit">Save destination</button></form></section>`;
}

/** What the page shows again after a failed save of the destination form: never a credential. */
export function destinationDraftOf(form: Form, error: unknown): DestinationDraft {
  return { draft: draftOf(form), errors: fieldIssues(problemFromError(error)?.errors ?? []) };
}
