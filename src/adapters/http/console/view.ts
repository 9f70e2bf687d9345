import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { Delivery } from "../../../domain/delivery.ts";
import { isoMillis } from "../../../domain/time.ts";
import { VERSION } from "../../../version.ts";
import type { Mode } from "./env.ts";

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

export const ASSET_CSS = `/console/assets/app.css?v=${VERSION}`;
export const ASSET_JS = `/console/assets/app.js?v=${VERSION}`;

export interface PageFrame {
  title: string;
  mode: Mode;
  base: string;
  /** Which navigation entry is current. */
  nav?: "overview" | "deliveries" | "live" | "catalog" | "privacy" | "new";
  /** The session's CSRF token (sign-out form); absent on the sign-in page. */
  csrf?: string;
  notice?: string | null;
  error?: string | null;
}

/** The page around every view: header with navigation, main landmark, one stylesheet and one script. */
export function page(frame: PageFrame, body: Html): Html {
  const link = (key: PageFrame["nav"], href: string, label: string) =>
    html`<a href="${href}"${frame.nav === key ? raw(' aria-current="page"') : ""}>${label}</a>`;
  const nav = frame.csrf
    ? html`<nav aria-label="Main">
        ${link("overview", frame.base, "Overview")} ${link("deliveries", `${frame.base}/deliveries`, "Deliveries")}
        ${link("live", `${frame.base}/live`, "Live")}
        ${frame.mode === "console" ? link("catalog", `${frame.base}/catalog`, "Event catalog") : ""}
        ${frame.mode === "console" ? link("privacy", `${frame.base}/privacy`, "Privacy") : ""}
        <form method="post" action="${frame.base}/sign-out" class="inline">
          <input type="hidden" name="_csrf" value="${frame.csrf}" />
          <button type="submit" class="link">Sign out</button>
        </form>
      </nav>`
    : "";
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<meta name="referrer" content="same-origin" />
<link rel="icon" href="data:," />
<title>${frame.title} · Herald ${frame.mode === "portal" ? "webhooks" : "Console"}</title>
<link rel="stylesheet" href="${ASSET_CSS}" />
<script type="module" src="${ASSET_JS}"></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <span class="brand">${frame.mode === "portal" ? "Webhooks" : "Herald Console"}</span>
  ${nav}
</header>
<main id="main" tabindex="-1">
${frame.notice ? html`<p class="notice" role="status">${frame.notice}</p>` : ""}
${frame.error ? html`<div class="error" role="alert"><strong>That did not work.</strong> ${frame.error}</div>` : ""}
${body}
</main>
</body>
</html>`;
}

/** A time in UTC; the script shows it in the viewer's zone and keeps UTC on hover. */
export function time(d: Date | null | undefined, empty = "—"): Html {
  if (!d) return html`<span class="muted">${empty}</span>`;
  const iso = isoMillis(d);
  return html`<time datetime="${iso}" title="${iso}">${iso.replace("T", " ").replace(".000Z", "Z")}</time>`;
}

/** A delivery status as a labelled badge (colour is never the only signal). */
export function statusBadge(status: Delivery["status"]): Html {
  return html`<span class="badge s-${status}">${status}</span>`;
}

/** A hidden CSRF field for a form. */
export const csrfField = (token: string): Html => html`<input type="hidden" name="_csrf" value="${token}" />`;

/** Seconds as a short duration: 45s, 12m, 3h 5m, 2d. */
export function ago(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86_400)}d`;
}

/** Builds a query string from the non-empty values. */
export function query(params: Record<string, string | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}
