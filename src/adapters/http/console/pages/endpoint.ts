import { notFound } from "../../../../domain/errors.ts";
import { isoMillis } from "../../../../domain/time.ts";
import { type PageRoutes, param } from "../context.ts";
import { endpointActionRoutes } from "./endpoint-actions.ts";
import { draftOf, runFilterTest } from "./endpoint-filter.ts";
import { newEndpointRoutes } from "./endpoint-new.ts";
import { formFailed, showEndpoint } from "./endpoint-page.ts";
import { secretRoutes } from "./endpoint-secret.ts";
import { messagePage } from "./message.ts";

/** The endpoint pages: a new endpoint (console only), an endpoint's settings, and its actions. */
export const endpointRoutes: PageRoutes = (r, p) => {
  const { base } = p;

  // Registered before /endpoints/:id, which would otherwise take "new" for an id.
  if (p.mode === "console") newEndpointRoutes(r, p);
  secretRoutes(r, p);

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

  endpointActionRoutes(r, p);
};
