import { type Context, Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { Reach } from "../../../app/console-insights.ts";
import type { DeliveryFilter } from "../../../app/ports/deliveries.ts";
import { DELIVERY_STATUSES, type Delivery, type DeliveryStatus } from "../../../domain/delivery.ts";
import type { Endpoint } from "../../../domain/endpoint.ts";
import { DomainError, invalid, notFound } from "../../../domain/errors.ts";
import { type EventType, isEventType } from "../../../domain/event-catalog.ts";
import { UUID_PATTERN } from "../../../domain/ids.ts";
import { isoMillis } from "../../../domain/time.ts";
import { decodeCursor, encodeCursor } from "../cursor.ts";
import type { HttpDeps } from "../env.ts";
import { problemFromError, statusOf } from "../problem.ts";
import type { ConsoleDeps, ConsoleEnv, Mode } from "./env.ts";
import { type Form, field, fields, parseMoment, parseOrderingField, parseRateLimitField } from "./forms.ts";
import { type DeliveryQuery, deliveriesPage, deliveryDetailPage } from "./pages/deliveries.ts";
import { endpointPage, newEndpointPage, secretPage } from "./pages/endpoint.ts";
import { catalogPage, eventPage, livePage, messagePage } from "./pages/misc.ts";
import { overviewPage } from "./pages/overview.ts";
import { privacyPage } from "./pages/privacy.ts";
import { BASE, clearSessionCookie, requireCsrf, requireSession } from "./security.ts";
import { type Html, type PageFrame, page } from "./view.ts";

type C = Context<ConsoleEnv>;

const NOTICES: Record<string, string> = {
  created: "Endpoint created.",
  saved: "Settings saved.",
  enabled: "Endpoint enabled.",
  disabled: "Endpoint disabled: new events will be recorded as skipped.",
  deleted: "Endpoint deleted; what was still owed to it is cancelled.",
  retried: "Retry queued: the new attempt is below and will update when it has been sent.",
  tested: "Test event sent: its delivery is below.",
  retention: "Retention saved: the hourly retention job applies it.",
};

/** The pages and actions of the console (mode "console") or the customer portal (mode "portal"). */
export function consoleRoutes(mode: Mode, deps: HttpDeps, cd: ConsoleDeps): Hono<ConsoleEnv> {
  const base = BASE[mode];
  const r = new Hono<ConsoleEnv>();
  const { insights } = cd;

  const reach = (c: C): Reach => ({ scope: c.var.session.scope, webhookIds: c.var.session.webhookIds });

  const frame = (c: C, title: string, nav?: PageFrame["nav"]): PageFrame => ({
    title,
    mode,
    base,
    nav,
    csrf: c.var.session.csrfToken,
    notice: NOTICES[c.req.query("notice") ?? ""] ?? null,
  });

  const render = (c: C, f: PageFrame, body: Html, status = 200) => c.html(page(f, body), status as 200);

  /** Errors in plain words: the API's `detail` (and the fields at fault), with the API's status. */
  const renderError = (c: C, error: unknown, title = "Something went wrong") => {
    const problem = problemFromError(error);
    if (!problem) throw error;
    const issues =
      problem.errors && problem.errors.length > 0
        ? ` ${problem.errors.map((i) => `${i.path.replace(/^body\./, "")}: ${i.message}`).join("; ")}.`
        : "";
    const f: PageFrame = { ...frame(c, title), error: `${problem.detail}${issues}` };
    const back = c.req.header("referer") ? null : null;
    return render(
      c,
      f,
      messagePage(title, "Nothing was changed. Go back, correct it and try again.", {
        href: back ?? base,
        label: "Back to the overview",
      }),
      statusOf(problem.code),
    );
  };

  const guarded =
    (fn: (c: C) => Promise<Response>) =>
    async (c: C): Promise<Response> => {
      try {
        return await fn(c);
      } catch (e) {
        return renderError(c, e);
      }
    };

  /** An endpoint of the session's reach; a portal limited to other endpoints gets 404 as for a stranger's. */
  const endpointOf = async (c: C, id: string): Promise<Endpoint> => {
    if (!UUID_PATTERN.test(id) || !insights.allowed(reach(c), id.toLowerCase()))
      throw notFound("The endpoint");
    return deps.endpoints.get(c.var.session.scope, id.toLowerCase());
  };

  const deliveryOf = async (c: C, id: string): Promise<Delivery> => {
    if (!UUID_PATTERN.test(id)) throw notFound("The delivery");
    const d = await deps.deliveries.get(c.var.session.scope, id.toLowerCase());
    if (!insights.allowed(reach(c), d.webhookId)) throw notFound("The delivery");
    return d;
  };

  const visibleEndpoints = async (c: C): Promise<Endpoint[]> => {
    const page = await deps.endpoints.list(c.var.session.scope, {}, { limit: 100, cursor: null });
    return page.data.filter((e) => insights.allowed(reach(c), e.id));
  };

  const form = (c: C) => c.req.parseBody({ all: true }) as Promise<Form>;
  const redirect = (c: C, path: string) => c.redirect(`${base}${path}`, 303);

  // Unauthenticated: the console sends you to sign in; a portal without a live link has nowhere to go.
  r.use(
    "*",
    requireSession(cd.use, mode, (c) => {
      if (mode === "console") {
        if (c.req.method === "GET" && !c.req.path.endsWith("/stream"))
          return c.redirect("/console/sign-in", 303);
        return c.html(
          page(
            { title: "Signed out", mode, base },
            messagePage("You are signed out", "Your session has ended. Sign in again to continue.", {
              href: "/console/sign-in",
              label: "Sign in",
            }),
          ),
          401,
        );
      }
      return c.html(
        page(
          { title: "Link expired", mode, base },
          messagePage(
            "This link has expired or was revoked",
            "Portal links work for a limited time. Ask for a new link from the service that sent you here.",
          ),
        ),
        401,
      );
    }),
  );
  r.use(
    "*",
    requireCsrf((c, reason) =>
      c.html(
        page(
          { title: "Refused", mode, base },
          messagePage("Request refused", `Herald refused this change because ${reason}.`, {
            href: base,
            label: "Back to the overview",
          }),
        ),
        403,
      ),
    ),
  );

  r.post("/sign-out", async (c) => {
    await cd.use.signOut(c.var.session);
    clearSessionCookie(c, mode);
    if (mode === "portal") {
      return c.html(
        page({ title: "Signed out", mode, base }, messagePage("Signed out", "You can close this page.")),
      );
    }
    return c.redirect("/console/sign-in", 303);
  });

  r.get(
    "/",
    guarded(async (c) => {
      const endpoints = await visibleEndpoints(c);
      const overview = await insights.overview(reach(c), endpoints);
      return render(c, frame(c, "Overview", "overview"), overviewPage(overview, base, mode === "console"));
    }),
  );

  if (mode === "console") {
    r.get("/endpoints/new", (c) =>
      render(c, frame(c, "New endpoint", "new"), newEndpointPage(base, c.var.session.csrfToken)),
    );
    r.post(
      "/endpoints",
      guarded(async (c) => {
        const f = await form(c);
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
          return render(c, frame(c, "Endpoint created"), secretPage(base, endpoint, secret, false), 201);
        } catch (e) {
          const p = problemFromError(e);
          if (!p) throw e;
          const issues = p.errors?.map((i) => `${i.path}: ${i.message}`).join("; ");
          return render(
            c,
            { ...frame(c, "New endpoint", "new"), error: issues ? `${p.detail} ${issues}.` : p.detail },
            newEndpointPage(base, c.var.session.csrfToken, values),
            statusOf(p.code),
          );
        }
      }),
    );
    const privacy = async (c: C, done: Parameters<typeof privacyPage>[4] = null) => {
      const scope = c.var.session.scope;
      const [settings, erasures] = await Promise.all([
        deps.settings.get(scope),
        deps.erasures.list(scope, { limit: 20, cursor: null }),
      ]);
      return render(
        c,
        frame(c, "Privacy", "privacy"),
        privacyPage(base, c.var.session.csrfToken, settings, erasures.data, done),
      );
    };
    r.get(
      "/privacy",
      guarded((c) => privacy(c)),
    );
    r.post(
      "/privacy/retention",
      guarded(async (c) => {
        const retention = field(await form(c), "retention");
        await deps.settings.update(c.var.session.scope, { retention: retention === "" ? null : retention });
        return redirect(c, "/privacy?notice=retention");
      }),
    );
    r.post(
      "/privacy/erase",
      guarded(async (c) => {
        const f = await form(c);
        if (field(f, "confirm") !== "yes") {
          throw new DomainError("validation_failed", "Tick the box to confirm the erasure.", [
            { path: "confirm", message: "must be ticked" },
          ]);
        }
        const resourceId = field(f, "resource_id");
        const recipient = field(f, "recipient");
        const done = await deps.erasures.create(c.var.session.scope, {
          resourceId: resourceId === "" ? undefined : resourceId,
          recipient: recipient === "" ? undefined : recipient,
        });
        return privacy(c, done);
      }),
    );
    r.get("/catalog", (c) => {
      c.header("Cache-Control", "private, max-age=300");
      return render(c, frame(c, "Event catalog", "catalog"), catalogPage());
    });
  }

  r.get(
    "/endpoints/:id",
    guarded(async (c) => {
      const e = await endpointOf(c, param(c, "id"));
      const held = (await deps.endpoints.held([e])).get(e.id);
      return render(c, frame(c, e.url), endpointPage(base, c.var.session.csrfToken, e, held));
    }),
  );

  r.post(
    "/endpoints/:id/:action",
    guarded(async (c) => {
      const e = await endpointOf(c, param(c, "id"));
      const scope = c.var.session.scope;
      const f = await form(c);
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
          return redirect(c, `/endpoints/${e.id}?notice=saved`);
        case "enable":
          await deps.endpoints.enable(scope, e.id);
          return redirect(c, `/endpoints/${e.id}?notice=enabled`);
        case "disable":
          await deps.endpoints.update(scope, e.id, { enabled: false });
          return redirect(c, `/endpoints/${e.id}?notice=disabled`);
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
          return render(c, frame(c, "New secret"), secretPage(base, endpoint, secret, true));
        }
        case "test": {
          const type = field(f, "type");
          const { delivery } = await deps.tools.sendTest(scope, e.id, isEventType(type) ? type : undefined);
          return redirect(c, `/deliveries/${delivery.id}?notice=tested`);
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
          return render(
            c,
            frame(c, "Recovery queued"),
            messagePage(
              "Recovery queued",
              `${result.queued} ${result.queued === 1 ? "delivery was" : "deliveries were"} queued again for events from ${isoMillis(result.since)} to ${isoMillis(result.until)} whose latest delivery failed or was skipped.`,
              { href: `${base}/deliveries?webhook_id=${e.id}`, label: "See the deliveries" },
            ),
          );
        }
        default:
          throw notFound("The action");
      }
    }),
  );

  r.get(
    "/deliveries",
    guarded(async (c) => {
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
      const endpoints = await visibleEndpoints(c);
      const result = q.webhook_id
        ? await endpointOf(c, q.webhook_id).then((e) =>
            deps.deliveries.list(c.var.session.scope, e.id, filter, pageRequest),
          )
        : await insights.list(reach(c), filter, pageRequest);
      return render(
        c,
        frame(c, "Deliveries", "deliveries"),
        deliveriesPage(base, q, endpoints, result.data, result.next ? encodeCursor(result.next) : null),
      );
    }),
  );

  r.get(
    "/deliveries/:id",
    guarded(async (c) => {
      const d = await deliveryOf(c, param(c, "id"));
      const scope = c.var.session.scope;
      const [endpoint, sent, timeline] = await Promise.all([
        deps.endpoints.get(scope, d.webhookId).catch(() => null),
        insights.sentRequest(scope, d),
        insights.timeline(reach(c), d),
      ]);
      return render(
        c,
        frame(c, `Delivery ${d.attempt} of ${d.eventType}`, "deliveries"),
        deliveryDetailPage(base, c.var.session.csrfToken, d, endpoint, sent, timeline),
      );
    }),
  );

  r.post(
    "/deliveries/:id/retry",
    guarded(async (c) => {
      const d = await deliveryOf(c, param(c, "id"));
      const next = await deps.deliveries.retry(c.var.session.scope, d.id);
      return redirect(c, `/deliveries/${next.id}?notice=retried`);
    }),
  );

  r.get(
    "/events/:id",
    guarded(async (c) => {
      const id = param(c, "id");
      if (!/^evt_[A-Za-z0-9]{1,64}$/.test(id)) throw notFound("The event");
      const { envelope, body } = await insights.envelope(c.var.session.scope, id);
      const latest = await insights.fanout(reach(c), id);
      // A portal limited to some endpoints sees only events that reached them.
      if (c.var.session.webhookIds !== null && latest.length === 0) throw notFound("The event");
      const endpoints = new Map((await visibleEndpoints(c)).map((e) => [e.id, e]));
      return render(
        c,
        frame(c, `Event ${envelope.type}`),
        eventPage(base, envelope, body, latest, endpoints),
      );
    }),
  );

  r.get(
    "/live",
    guarded(async (c) => {
      const endpoints = await visibleEndpoints(c);
      const recent = await insights.list(reach(c), {}, { limit: 20, cursor: null });
      return render(
        c,
        frame(c, "Live", "live"),
        livePage(base, recent.data, new Map(endpoints.map((e) => [e.id, e.url]))),
      );
    }),
  );

  r.get("/live/stream", (c) => {
    const pollMs = cd.livePollMs ?? 1000;
    const who = reach(c);
    const sessionExpires = c.var.session.expiresAt.getTime();
    return streamSSE(c, async (stream) => {
      // Polls the store, not an in-process bus: attempts made by any Herald process on the database show.
      const sent = new Map<string, string>();
      let since = new Date(Date.now() - 5_000);
      const urls = new Map<string, string>();
      const started = Date.now();
      let aborted = false;
      stream.onAbort(() => {
        aborted = true;
      });
      await stream.writeSSE({ event: "ready", data: "{}" });
      // Ends after a while; EventSource reconnects by itself, and the session is checked again then.
      while (!aborted && Date.now() - started < 5 * 60_000 && Date.now() < sessionExpires) {
        const changed = await insights.changedSince(who, since);
        for (const d of changed) {
          const key = `${d.status}/${d.attemptedAt?.getTime() ?? 0}`;
          if (sent.get(d.id) === key) continue;
          sent.set(d.id, key);
          if (!urls.has(d.webhookId)) {
            const e = await deps.endpoints.get(who.scope, d.webhookId).catch(() => null);
            urls.set(d.webhookId, e?.url ?? d.webhookId);
          }
          await stream.writeSSE({
            event: "delivery",
            data: JSON.stringify(liveItem(d, urls.get(d.webhookId))),
          });
        }
        const newest = changed.reduce(
          (t, d) => Math.max(t, d.createdAt.getTime(), d.attemptedAt?.getTime() ?? 0),
          since.getTime(),
        );
        // A small overlap: records written with a slightly older clock by another process are not missed.
        since = new Date(Math.max(since.getTime(), newest - 5_000));
        if (sent.size > 5_000) sent.clear();
        await stream.writeSSE({ event: "ping", data: "" });
        await stream.sleep(pollMs);
      }
    });
  });

  return r;
}

/** The ticked event types: at least one, each of the catalog. */
function eventTypes(values: string[]): EventType[] {
  if (values.length === 0) {
    throw invalid([{ path: "events", message: "tick at least one event type" }]);
  }
  const unknown = values.filter((v) => !isEventType(v));
  if (unknown.length > 0) throw invalid([{ path: "events", message: `unknown event type "${unknown[0]}"` }]);
  return [...new Set(values)] as EventType[];
}

/** What the live feed sends per attempt: enough to draw a row. */
function liveItem(d: Delivery, url: string | undefined) {
  return {
    id: d.id,
    webhook_id: d.webhookId,
    endpoint_url: url ?? d.webhookId,
    event_id: d.eventId,
    event_type: d.eventType,
    attempt: d.attempt,
    trigger: d.trigger,
    status: d.status,
    response_status: d.responseStatus,
    error: d.error,
    created_at: isoMillis(d.createdAt),
    attempted_at: d.attemptedAt ? isoMillis(d.attemptedAt) : null,
  };
}

const param = (c: C, name: string): string => c.req.param(name) ?? "";
