// The new endpoint form's kind choice (ADR 27): HTTPS by default, or Kafka, RabbitMQ or SQS, each with
// its boxes in a fieldset of its own. Without a script every fieldset is shown and only the chosen kind's
// is read; the console's script shows the chosen one alone and disables the others, so a box typed in a
// kind then left is not even sent.
import { html } from "hono/html";
import { DESTINATION_KINDS, type DestinationKind } from "../../../../domain/destination.ts";
import type { Html } from "../view.ts";
import { destinationFields, type FieldsView, fieldError, textBox } from "./destination-fields.ts";

const KIND_LABEL: Record<DestinationKind, string> = {
  https: "HTTPS",
  kafka: "Apache Kafka",
  rabbitmq: "RabbitMQ",
  sqs: "Amazon SQS",
};

const KIND_HELP: Record<DestinationKind, string> = {
  https: "each event is POSTed to a URL",
  kafka: "each event is a record on a topic",
  rabbitmq: "each event is published to an exchange",
  sqs: "each event is a message on a queue",
};

/** The kind's radio buttons, then one fieldset per kind with its boxes. */
export function kindChoiceAndFields(kind: DestinationKind, v: FieldsView): Html {
  return html`<fieldset class="kinds" data-kind-choice><legend>Kind</legend>
${DESTINATION_KINDS.map(
  (k) =>
    html`<label class="check"><input type="radio" name="kind" value="${k}"${k === kind ? html` checked` : ""} /> ${KIND_LABEL[k]} <span class="muted small">(${KIND_HELP[k]})</span></label>`,
)}
${fieldError(v.errors, "kind")}
</fieldset>
<fieldset class="destination stack" data-kind="https"><legend>HTTPS</legend>
${textBox(v, "url", "URL", "https://…, where Herald will POST each event", "https://example.com/webhooks/herald")}
</fieldset>
${(["kafka", "rabbitmq", "sqs"] as const).map(
  (k) =>
    html`<fieldset class="destination stack" data-kind="${k}"><legend>${KIND_LABEL[k]} <span class="muted small">(read only when the kind is ${KIND_LABEL[k]})</span></legend>
${destinationFields(k, v)}
</fieldset>`,
)}`;
}
