import { html } from "hono/html";
import type { OutcomeBucket, Overview } from "../../../../app/console-insights.ts";
import type { PageRoutes } from "../context.ts";
import { ago, type Html, time } from "../view.ts";

/** Deliveries by outcome per hour over the last 24 h, as an inline SVG bar chart (no script needed). */
export function outcomeChart(buckets: OutcomeBucket[]): Html {
  const W = 720;
  const H = 160;
  const pad = 24;
  const barW = (W - pad) / buckets.length;
  const max = Math.max(1, ...buckets.map((b) => b.succeeded + b.failed + b.other));
  const total = buckets.reduce((n, b) => n + b.succeeded + b.failed + b.other, 0);
  const bars = buckets.map((b, i) => {
    const x = pad + i * barW + 1;
    const w = Math.max(1, barW - 2);
    let y = H - pad;
    const parts: Html[] = [];
    for (const [cls, n] of [
      ["ok", b.succeeded],
      ["bad", b.failed],
      ["other", b.other],
    ] as const) {
      if (n === 0) continue;
      const h = Math.max(1, ((H - 2 * pad) * n) / max);
      y -= h;
      parts.push(
        html`<rect class="${cls}" x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${w.toFixed(1)}" height="${h.toFixed(1)}"></rect>`,
      );
    }
    const label = `${b.start.toISOString().slice(11, 16)} UTC: ${b.succeeded} succeeded, ${b.failed} failed, ${b.other} other`;
    return html`<g><title>${label}</title>${parts}<rect class="hit" x="${x.toFixed(1)}" y="${pad}" width="${w.toFixed(1)}" height="${H - 2 * pad}"></rect></g>`;
  });
  const first = buckets[0]?.start;
  const last = buckets[buckets.length - 1]?.start;
  return html`<figure class="chart">
<svg viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-title chart-desc">
<title id="chart-title">Deliveries by outcome, per hour, last 24 hours</title>
<desc id="chart-desc">${total} attempts in total; the peak hour had ${max === 1 && total === 0 ? 0 : max}.</desc>
<line class="axis" x1="${pad}" y1="${H - pad}" x2="${W}" y2="${H - pad}"></line>
<text class="tick" x="${pad}" y="${H - 6}">${first ? `${first.toISOString().slice(11, 16)} UTC, 23 h ago` : ""}</text>
<text class="tick end" x="${W}" y="${H - 6}">${last ? `${last.toISOString().slice(11, 16)} UTC, this hour` : ""}</text>
<text class="tick" x="0" y="${pad + 4}">${max}</text>
${bars}
</svg>
<figcaption><span class="key ok"></span> succeeded <span class="key bad"></span> failed <span class="key other"></span> skipped or cancelled</figcaption>
</figure>`;
}

export function overviewPage(o: Overview, base: string, canCreate: boolean): Html {
  const rows = o.endpoints.map((h) => {
    const e = h.endpoint;
    const rate = h.successRate === null ? "—" : `${(h.successRate * 100).toFixed(1)}%`;
    return html`<tr>
<td><a href="${base}/endpoints/${e.id}">${e.url}</a>${e.description ? html`<div class="muted small">${e.description}</div>` : ""}</td>
<td>${e.enabled ? html`<span class="badge s-succeeded">enabled</span>` : html`<span class="badge s-failed">disabled: ${e.disabledReason ?? "manual"}</span>`}</td>
<td class="num">${rate}</td>
<td class="num"><a href="${base}/deliveries?webhook_id=${e.id}">${h.attempts24h}</a></td>
<td>${time(h.lastSuccessAt, "never")}</td>
<td>${e.failingSince ? html`failing since ${time(e.failingSince)}` : html`<span class="muted">none</span>`}</td>
</tr>`;
  });
  const table =
    o.endpoints.length === 0
      ? html`<div class="empty"><p>No endpoints yet.</p>${canCreate ? html`<p><a class="button" href="${base}/endpoints/new">Add your first endpoint</a> — Herald then sends every event it subscribes to, signed, and retries when it fails.</p>` : html`<p>No endpoints are shared with you here yet; ask the team that sent you this link.</p>`}</div>`
      : html`<table>
<caption class="sr">Endpoints and their health over the last 24 hours</caption>
<thead><tr><th scope="col">Endpoint</th><th scope="col">State</th><th scope="col" class="num">Success (24 h)</th><th scope="col" class="num">Attempts (24 h)</th><th scope="col">Last success</th><th scope="col">Failure streak</th></tr></thead>
<tbody>${rows}</tbody></table>`;
  return html`<div class="head"><h1>Overview</h1>${canCreate ? html`<a class="button" href="${base}/endpoints/new">New endpoint</a>` : ""}</div>
<dl class="stats">
<div><dt>Due now</dt><dd id="due-backlog">${o.dueBacklog}</dd></div>
<div><dt>Oldest due</dt><dd>${o.dueBacklog > 0 ? ago(o.oldestDueAgeSeconds) : "—"}</dd></div>
<div><dt>Endpoints</dt><dd>${o.endpoints.length}</dd></div>
</dl>
<h2>Endpoints</h2>
${table}
<h2>Deliveries by outcome</h2>
${outcomeChart(o.buckets)}
${o.sampled ? html`<p class="muted small">The figures cover the newest 20,000 attempts of the last 24 hours.</p>` : ""}`;
}

/** GET /: the endpoints' health, the due backlog and the 24-hour chart. */
export const overviewRoutes: PageRoutes = (r, p) => {
  r.get(
    "/",
    p.guarded(async (c) => {
      const endpoints = await p.visibleEndpoints(c);
      const overview = await p.cd.insights.overview(p.reach(c), endpoints);
      return p.render(
        c,
        p.frame(c, "Overview", "overview"),
        overviewPage(overview, p.base, p.mode === "console"),
      );
    }),
  );
};
