import { DomainError, notFound } from "../../../../domain/errors.ts";
import { isEventType } from "../../../../domain/event-catalog.ts";
import { isoMillis } from "../../../../domain/time.ts";
import { type PageRoutes, param } from "../context.ts";
import { eventTypes, field, fields, parseMoment, parseOrderingField, parseRateLimitField } from "../forms.ts";
import { destinationPatchOf, kindOf } from "./destination-form.ts";
import { certificateChangeOf } from "./endpoint-certificate.ts";
import { destinationDraftOf } from "./endpoint-destination-edit.ts";
import { filterTestPath, parseFilterText } from "./endpoint-filter.ts";
import { headerChangeOf } from "./endpoint-headers.ts";
import { formFailed } from "./endpoint-page.ts";
import { schemeChangeOf } from "./endpoint-scheme.ts";
import { showSecretOnce } from "./endpoint-secret.ts";

/**
 * The endpoint page's forms (POST /endpoints/:id/<action>): each changes or does one thing, then
 * redirects (Post/Redirect/Get); a form that fails validation shows the page again with the error.
 */
export const endpointActionRoutes: PageRoutes = (r, p) => {
  const { deps, base } = p;
  r.post(
    "/endpoints/:id/:action",
    p.guarded(async (c) => {
      const e = await p.endpointOf(c, param(c, "id"));
      const scope = c.var.session.scope;
      const f = await p.form(c);
      switch (param(c, "action")) {
        case "update":
          await deps.endpoints.update(scope, e.id, {
            // A broker endpoint's url is derived from its destination: its form has no URL field.
            url: e.destination ? undefined : field(f, "url"),
            description: field(f, "description") || null,
            events: eventTypes(fields(f, "events")),
            // A form without the box (an older page) leaves the limit as it is.
            rateLimit: f.rate_limit === undefined ? undefined : parseRateLimitField(field(f, "rate_limit")),
            ordering: f.ordering === undefined ? undefined : parseOrderingField(field(f, "ordering")),
          });
          return p.redirect(c, `/endpoints/${e.id}?notice=saved`);
        case "destination":
          try {
            if (!e.destination) throw notFound("The destination form");
            // The kind sent is checked by the use case as the API's (it never changes): another kind
            // goes to it alone, to be refused in its words.
            const kind = f.kind === undefined ? e.destination.kind : kindOf(f);
            await deps.endpoints.update(
              scope,
              e.id,
              kind === e.destination.kind ? { kind, destination: destinationPatchOf(f, kind) } : { kind },
            );
            return p.redirect(c, `/endpoints/${e.id}?notice=destination`);
          } catch (err) {
            return formFailed(c, p, e, err, { destinationDraft: destinationDraftOf(f, err) });
          }
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
