import { html } from "hono/html";
import { streamSSE } from "hono/streaming";
import type { Delivery } from "../../../../domain/delivery.ts";
import { isoMillis } from "../../../../domain/time.ts";
import type { C, PageContext, PageRoutes } from "../context.ts";
import type { Html } from "../view.ts";
import { deliveryTable } from "./deliveries.ts";

export function livePage(base: string, recent: Delivery[], urls: Map<string, string>): Html {
  return html`<h1>Live</h1>
<p class="muted" id="live-state" role="status" aria-live="polite">Connecting…</p>
<p class="muted small">Attempts made by every Herald process sharing the database are shown. Nothing to watch? Send a test event from an <a href="${base}">endpoint's page</a>.</p>
<div data-live="${base}/live/stream" data-base="${base}">
${deliveryTable(base, recent, urls, "live-feed")}
</div>`;
}

/** What the live feed sends per attempt: enough to draw a row. */
export function liveItem(d: Delivery, url: string | undefined) {
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

/** GET /live, and its Server-Sent Events stream. */
export const liveRoutes: PageRoutes = (r, p) => {
  const { insights } = p.cd;

  r.get(
    "/live",
    p.guarded(async (c) => {
      const endpoints = await p.visibleEndpoints(c);
      const recent = await insights.list(p.reach(c), {}, { limit: 20, cursor: null });
      return p.render(
        c,
        p.frame(c, "Live", "live"),
        livePage(p.base, recent.data, new Map(endpoints.map((e) => [e.id, e.url]))),
      );
    }),
  );

  // The live channel. Without a query: every attempt of the reach, for the Live page. With
  // `?delivery=<id>`: every attempt of that delivery's event to its endpoint, for the attempt page,
  // which updates itself when one it shows pending is recorded (and when a retry adds another).
  r.get(
    "/live/stream",
    p.guarded(async (c) => {
      const who = p.reach(c);
      const id = c.req.query("delivery");
      const followed = id === undefined ? null : await p.deliveryOf(c, id);
      let since = new Date(Date.now() - 5_000);
      const poll = followed
        ? () => insights.timeline(who, followed)
        : async () => {
            const changed = await insights.changedSince(who, since);
            const newest = changed.reduce(
              (t, d) => Math.max(t, d.createdAt.getTime(), d.attemptedAt?.getTime() ?? 0),
              since.getTime(),
            );
            // A small overlap: records written with a slightly older clock by another process are not missed.
            since = new Date(Math.max(since.getTime(), newest - 5_000));
            return changed;
          };
      return liveStream(c, p, poll);
    }),
  );
};

/**
 * Pushes each attempt `poll` answers whenever its status or attempt time differs from what this stream
 * last sent. Polls the store, not an in-process bus: attempts made by any Herald process on the
 * database show. Ends after five minutes (or with the session); EventSource reconnects by itself, and
 * the session is checked again then.
 */
function liveStream(c: C, p: PageContext, poll: () => Promise<Delivery[]>): Response {
  const pollMs = p.cd.livePollMs ?? 1000;
  const scope = c.var.session.scope;
  const sessionExpires = c.var.session.expiresAt.getTime();
  return streamSSE(c, async (stream) => {
    const sent = new Map<string, string>();
    const urls = new Map<string, string>();
    const started = Date.now();
    let aborted = false;
    stream.onAbort(() => {
      aborted = true;
    });
    await stream.writeSSE({ event: "ready", data: "{}" });
    while (!aborted && Date.now() - started < 5 * 60_000 && Date.now() < sessionExpires) {
      for (const d of await poll()) {
        const key = `${d.status}/${d.attemptedAt?.getTime() ?? 0}`;
        if (sent.get(d.id) === key) continue;
        sent.set(d.id, key);
        if (!urls.has(d.webhookId)) {
          const e = await p.deps.endpoints.get(scope, d.webhookId).catch(() => null);
          urls.set(d.webhookId, e?.url ?? d.webhookId);
        }
        await stream.writeSSE({
          event: "delivery",
          data: JSON.stringify(liveItem(d, urls.get(d.webhookId))),
        });
      }
      if (sent.size > 5_000) sent.clear();
      await stream.writeSSE({ event: "ping", data: "" });
      await stream.sleep(pollMs);
    }
  });
}
