import type { Context, Hono } from "hono";
import type { Reach } from "../../../app/console-insights.ts";
import type { Delivery } from "../../../domain/delivery.ts";
import type { Endpoint } from "../../../domain/endpoint.ts";
import { notFound } from "../../../domain/errors.ts";
import { UUID_PATTERN } from "../../../domain/ids.ts";
import type { HttpDeps } from "../env.ts";
import { problemFromError, statusOf } from "../problem.ts";
import type { ConsoleDeps, ConsoleEnv, Mode } from "./env.ts";
import type { Form } from "./forms.ts";
import { messagePage } from "./pages/message.ts";
import { BASE } from "./security.ts";
import { type Html, type PageFrame, page } from "./view.ts";

export type C = Context<ConsoleEnv>;

/** What a page's handlers need: the use cases, and the helpers every page shares. */
export interface PageContext {
  mode: Mode;
  /** /console or /portal. */
  base: string;
  deps: HttpDeps;
  cd: ConsoleDeps;
  reach(c: C): Reach;
  frame(c: C, title: string, nav?: PageFrame["nav"]): PageFrame;
  render(c: C, f: PageFrame, body: Html, status?: number): Response | Promise<Response>;
  /** Errors in plain words: the API's `detail` (and the fields at fault), with the API's status. */
  renderError(c: C, error: unknown): Response | Promise<Response>;
  /** A handler whose domain errors are rendered by `renderError`. */
  guarded(fn: (c: C) => Promise<Response>): (c: C) => Promise<Response>;
  /** An endpoint of the session's reach; a portal limited to other endpoints gets 404 as for a stranger's. */
  endpointOf(c: C, id: string): Promise<Endpoint>;
  deliveryOf(c: C, id: string): Promise<Delivery>;
  visibleEndpoints(c: C): Promise<Endpoint[]>;
  form(c: C): Promise<Form>;
  /** 303 to a page of this console (Post/Redirect/Get). */
  redirect(c: C, path: string): Response;
}

/** Registers one page's handlers on the console's (or portal's) router. */
export type PageRoutes = (r: Hono<ConsoleEnv>, p: PageContext) => void;

/** The short confirmation a page shows after the redirect that follows a form (`?notice=`). */
const NOTICES: Record<string, string> = {
  created: "Endpoint created.",
  saved: "Settings saved.",
  enabled: "Endpoint enabled.",
  disabled: "Endpoint disabled: new events will be recorded as skipped.",
  deleted: "Endpoint deleted; what was still owed to it is cancelled.",
  retried: "Retry queued: the new attempt is below and will update when it has been sent.",
  tested: "Test event sent: its delivery is below.",
  retention: "Retention saved: the hourly retention job applies it.",
  headers: "Custom headers saved: the next attempt sends them.",
  unchanged: "Nothing to change: no header value was typed and none was ticked for removal.",
  filter: "Filter saved: only matching events are delivered from now on.",
  "filter-removed": "Filter removed: every event of the endpoint's types is delivered.",
  certificate:
    "Client certificate saved: it is presented when the receiver asks for one. The key is not shown again.",
  "certificate-removed": "Client certificate removed: its key is deleted and no certificate is presented.",
  scheme: "Signature scheme saved: the next attempt is signed with it.",
  destination: "Destination saved: the next attempt connects with these settings.",
};

export function pageContext(mode: Mode, deps: HttpDeps, cd: ConsoleDeps): PageContext {
  const base = BASE[mode];
  const { insights } = cd;

  const reach = (c: C): Reach => ({ scope: c.var.session.scope, webhookIds: c.var.session.webhookIds });

  const frame = (c: C, title: string, nav?: PageFrame["nav"]): PageFrame => ({
    title,
    mode,
    base,
    nav,
    // No session when the store failed before one was read (a page about the outage is still shown).
    csrf: c.var.session?.csrfToken,
    notice: NOTICES[c.req.query("notice") ?? ""] ?? null,
  });

  const render = (c: C, f: PageFrame, body: Html, status = 200) => c.html(page(f, body), status as 200);

  const renderError = (c: C, error: unknown) => {
    const problem = problemFromError(error);
    if (!problem) throw error;
    const status = statusOf(problem.code);
    // A page that does not exist is not a failed form: say what is missing, not "correct it and try again".
    if (problem.code === "not_found") {
      const changed = c.req.method === "GET" ? "" : " Nothing was changed.";
      return render(
        c,
        frame(c, "Not found"),
        messagePage(
          "Not found",
          `${problem.detail} It may have been deleted, or the address is not right.${changed}`,
          { href: base, label: "Back to the overview" },
        ),
        status,
      );
    }
    // The database is out of reach or restarting (ADR 10): the same condition as a 503 of the API, told
    // calmly. It is no fault of the form, and what was accepted before is kept.
    if (problem.code === "unavailable") {
      for (const [name, value] of Object.entries(problem.headers ?? {})) c.header(name, value);
      const changed =
        c.req.method === "GET" ? "" : " What you just sent may not have been saved: check, then try again.";
      return render(
        c,
        frame(c, "Temporarily unavailable"),
        messagePage(
          "Temporarily unavailable",
          `Herald cannot reach its database for a moment; it may be restarting. Nothing already accepted is lost, and deliveries resume by themselves.${changed} Try again in a few seconds.`,
          {
            href: c.req.method === "GET" ? c.req.path : base,
            label: c.req.method === "GET" ? "Try again" : "Back to the overview",
          },
        ),
        status,
      );
    }
    const issues =
      problem.errors && problem.errors.length > 0
        ? ` ${problem.errors.map((i) => `${i.path.replace(/^body\./, "")}: ${i.message}`).join("; ")}.`
        : "";
    const title = "Something went wrong";
    const f: PageFrame = { ...frame(c, title), error: `${problem.detail}${issues}` };
    return render(
      c,
      f,
      messagePage(title, "Nothing was changed. Go back, correct it and try again.", {
        href: base,
        label: "Back to the overview",
      }),
      status,
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
    const list = await deps.endpoints.list(c.var.session.scope, {}, { limit: 100, cursor: null });
    return list.data.filter((e) => insights.allowed(reach(c), e.id));
  };

  return {
    mode,
    base,
    deps,
    cd,
    reach,
    frame,
    render,
    renderError,
    guarded,
    endpointOf,
    deliveryOf,
    visibleEndpoints,
    form: (c) => c.req.parseBody({ all: true }) as Promise<Form>,
    redirect: (c, path) => c.redirect(`${base}${path}`, 303),
  };
}

/** A path parameter ("" when absent). */
export const param = (c: C, name: string): string => c.req.param(name) ?? "";
