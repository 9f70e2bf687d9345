import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { EventType, Webhook } from "../../clients/typescript/client.ts";
import { verifyWebhook, WebhookVerificationError } from "../../clients/typescript/verify.ts";
import { type Api, connectApi, listPages } from "./api.ts";
import { integer, splitList } from "./arg-values.ts";
import { type CliDeps, type Command, parseCommandArgs, positionals, usageError } from "./command.ts";
import { milliseconds } from "./format.ts";
import { CliError, type Io } from "./io.ts";

const DEFAULT_PORT = 4000;
const FORWARD_TIMEOUT_MS = 10_000;
// Hop-by-hop and length headers describe one connection; fetch sets its own.
const NOT_FORWARDED = new Set([
  "host",
  "connection",
  "keep-alive",
  "content-length",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "expect",
  "proxy-connection",
  "proxy-authorization",
]);

/** What `herald listen` reports for one delivery (and prints as one JSON line with --json). */
export interface ListenRecord {
  received_at: string;
  /** true: a secret's signature matched; false: verification failed; null: no secret to check with. */
  verified: boolean | null;
  /** The verification error code when verification failed. */
  reason: string | null;
  event_type: string | null;
  event_id: string | null;
  /** Receipt time minus X-Webhook-Timestamp (whole seconds, so up to 1 s high). */
  latency_ms: number | null;
  /** Receipt time minus the event's occurred_at: how long the event took to arrive, retries included. */
  age_ms: number | null;
  /** The status herald listen answered with. */
  answered: number;
  forward: { url: string; status: number | null; error: string | null } | null;
  /** The body as parsed JSON, when it is JSON. */
  event: unknown;
}

function clock(d: Date): string {
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}

/** One human line per delivery: time, verdict, event type, event id, latency, age, forward result. */
export function formatRecord(r: ListenRecord): string {
  const verdict =
    r.verified === true ? "✔ verified" : r.verified === false ? `✘ ${r.reason}` : "? unverified (no secret)";
  const parts = [
    clock(new Date(r.received_at)),
    verdict.padEnd(28),
    (r.event_type ?? "-").padEnd(28),
    r.event_id ?? "-",
  ];
  parts.push(`latency ${milliseconds(r.latency_ms)}`, `age ${milliseconds(r.age_ms)}`);
  if (r.answered !== 200) parts.push(`answered ${r.answered}`);
  if (r.forward) parts.push(`→ ${r.forward.status ?? `failed (${r.forward.error})`} from ${r.forward.url}`);
  return parts.join("  ");
}

async function readBody(req: IncomingMessage): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

function parseJson(body: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(body).toString("utf8"));
  } catch {
    return null;
  }
}

function field(value: unknown, name: string): string | null {
  if (typeof value !== "object" || value === null) return null;
  const v = (value as Record<string, unknown>)[name];
  return typeof v === "string" ? v : null;
}

function forwardHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (!NOT_FORWARDED.has(name.toLowerCase())) headers.append(name, raw[i + 1]!);
  }
  return headers;
}

async function forward(
  url: string,
  req: IncomingMessage,
  body: Uint8Array<ArrayBuffer>,
): Promise<ListenRecord["forward"]> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: forwardHeaders(req),
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    await res.arrayBuffer().catch(() => {});
    return { url, status: res.status, error: null };
  } catch (e) {
    const cause = (e as { cause?: { code?: unknown } }).cause;
    const error =
      typeof cause?.code === "string"
        ? cause.code
        : (e as Error).name === "TimeoutError"
          ? "timeout"
          : (e as Error).message;
    return { url, status: null, error };
  }
}

interface ListenOptions {
  secrets: string[];
  forwardUrl: string | null;
  rejectInvalid: boolean;
  json: boolean;
  toleranceSeconds: number;
}

async function handleDelivery(
  req: IncomingMessage,
  res: ServerResponse,
  io: Io,
  o: ListenOptions,
): Promise<void> {
  if (req.method !== "POST") {
    res.writeHead(req.method === "GET" || req.method === "HEAD" ? 200 : 405, {
      "Content-Type": "text/plain; charset=utf-8",
      Allow: "GET, HEAD, POST",
    });
    res.end("herald listen: POST webhook deliveries here.\n");
    return;
  }
  const body = await readBody(req);
  const received = new Date();
  let verified: boolean | null = null;
  let reason: string | null = null;
  if (o.secrets.length > 0) {
    try {
      await verifyWebhook({
        body,
        headers: req.headers,
        secrets: o.secrets,
        toleranceSeconds: o.toleranceSeconds,
        now: received,
      });
      verified = true;
    } catch (e) {
      verified = false;
      reason = e instanceof WebhookVerificationError ? e.code : (e as Error).message;
    }
  }
  const event = parseJson(body);
  const timestamp = req.headers["x-webhook-timestamp"];
  const occurredAt = Date.parse(field(event, "occurred_at") ?? "");
  const rejected = o.rejectInvalid && verified === false;
  const record: ListenRecord = {
    received_at: received.toISOString(),
    verified,
    reason,
    event_type: field(event, "type"),
    event_id:
      field(event, "id") ??
      (typeof req.headers["x-webhook-id"] === "string" ? req.headers["x-webhook-id"] : null),
    latency_ms:
      typeof timestamp === "string" && /^\d{1,12}$/.test(timestamp.trim())
        ? received.getTime() - Number(timestamp) * 1000
        : null,
    age_ms: Number.isNaN(occurredAt) ? null : received.getTime() - occurredAt,
    answered: rejected ? 400 : 200,
    forward: o.forwardUrl && !rejected ? await forward(o.forwardUrl, req, body) : null,
    event,
  };
  io.out(o.json ? JSON.stringify(record) : formatRecord(record));
  res.writeHead(record.answered, { "Content-Type": "text/plain; charset=utf-8" });
  res.end(rejected ? `${reason}\n` : "ok\n");
}

/** Resolves when the signal aborts, or on SIGINT/SIGTERM when there is none. */
function stopRequested(signal: AbortSignal | undefined): Promise<void> {
  if (signal) {
    return signal.aborted
      ? Promise.resolve()
      : new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  }
  return new Promise((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

/** The endpoint `listen --events` delivers to, and whether it is removed when listen stops. */
interface OwnEndpoint {
  api: Api;
  webhook: Webhook;
  secret: string;
  reused: boolean;
}

const LOCAL_URLS_HINT =
  "start Herald with HERALD_ALLOW_HTTP_URLS=true HERALD_ALLOW_PRIVATE_NETWORKS=true so it may deliver to http://127.0.0.1";

/**
 * Creates the endpoint pointing at this listener, or reuses one that already points here (left by an
 * earlier `listen --keep`, or by a listen that was killed): its event types are set to `events`, it is
 * enabled, and its secret is rotated (no grace), because a secret is only ever shown once.
 */
async function ownEndpoint(io: Io, deps: CliDeps, url: string, events: string[]): Promise<OwnEndpoint> {
  const api = connectApi(io, deps);
  const hint = (e: unknown): never => {
    if (e instanceof CliError && /^422 /.test(e.message) && /url/i.test(e.message)) {
      throw new CliError(`${e.message}\n  (${LOCAL_URLS_HINT})`);
    }
    throw e;
  };
  const all = await listPages(
    async (cursor) =>
      (await api.call(api.client.GET("/api/v1/webhooks", { params: { query: { limit: 100, cursor } } })))
        .data,
    { all: true },
  );
  const existing = all.data.find((w) => w.url === url);
  if (existing) {
    await api
      .call(
        api.client.PATCH("/api/v1/webhooks/{id}", {
          params: { path: { id: existing.id } },
          body: { events: events as EventType[], enabled: true },
        }),
      )
      .catch(hint);
    const { data } = await api.call(
      api.client.POST("/api/v1/webhooks/{id}/rotate", { params: { path: { id: existing.id } }, body: {} }),
    );
    return { api, webhook: data, secret: data.secret, reused: true };
  }
  const { data } = await api
    .call(
      api.client.POST("/api/v1/webhooks", {
        body: {
          url,
          events: events as EventType[],
          description: "herald listen (deleted when it stops, unless --keep)",
        },
      }),
    )
    .catch(hint);
  return { api, webhook: data, secret: data.secret, reused: false };
}

export const listenCommand: Command = {
  name: "listen",
  usage:
    "[--events TYPE[,TYPE...] [--keep]] [--port N] [--secret whsec_...] [--forward URL] [--reject-invalid] [--json]",
  summary: "Run a local receiver that verifies, prints and forwards deliveries.",
  details: [
    "Listens on 127.0.0.1. With --events it registers itself with Herald (HERALD_URL, HERALD_TOKEN): it",
    "creates an endpoint for those event types pointing at http://127.0.0.1:PORT/ (or reuses the one that",
    "already points there), prints that endpoint's signing secret once, verifies every delivery with it, and",
    "deletes the endpoint when it stops (Ctrl-C or SIGTERM) unless --keep is given. Herald must run with",
    "HERALD_ALLOW_HTTP_URLS=true HERALD_ALLOW_PRIVATE_NETWORKS=true to deliver to it.",
    "Without --events it only receives: register an endpoint yourself and pass its --secret.",
    "",
    "Each delivery is checked with the TypeScript verifier (clients/typescript/verify.ts) and printed as one",
    "line: time, verdict, event type, event id, latency (now - X-Webhook-Timestamp) and age (now -",
    "occurred_at). --forward re-POSTs the raw body with the original headers to your app.",
    "",
    "A local loop in three terminals (2 and 3 with export HERALD_TOKEN=hrld_..., see npx herald tokens create):",
    "  1$ HERALD_ALLOW_HTTP_URLS=true HERALD_ALLOW_PRIVATE_NETWORKS=true npm start",
    "  2$ npx herald listen --events message.delivered,message.bounced   # registers itself, prints its secret",
    "  3$ npx herald events send message.delivered                       # listen prints it, verified",
  ].join("\n"),
  options: [
    ["--events TYPES", "Register an endpoint for these types pointing here (comma-separated, repeatable)"],
    ["--keep", "With --events: keep the endpoint when listen stops (the next listen on the port reuses it)"],
    ["--port N", `Port on 127.0.0.1 (default HERALD_LISTEN_PORT or ${DEFAULT_PORT}; 0 picks a free one)`],
    ["--secret whsec_...", "Also verify with this secret (repeatable; default: HERALD_WEBHOOK_SECRET)"],
    ["--forward URL", "Also POST each delivery to this URL (raw body, original headers)"],
    ["--reject-invalid", "Answer 400 with the reason when verification fails (Herald then retries)"],
    ["--tolerance SECONDS", "Allowed clock distance of X-Webhook-Timestamp (default 300)"],
    ["--json", "Print one JSON object per delivery; messages go to stderr"],
  ],
  examples: [
    "npx herald listen --events message.delivered,message.bounced --forward http://localhost:3000/webhooks/herald",
    "npx herald listen --port 4000 --secret whsec_...   # an endpoint you registered yourself",
  ],
  api: false,
  async run(args, io, deps: CliDeps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {
      events: { type: "string", multiple: true },
      keep: { type: "boolean", default: false },
      port: { type: "string" },
      secret: { type: "string", multiple: true },
      forward: { type: "string" },
      "reject-invalid": { type: "boolean", default: false },
      tolerance: { type: "string" },
    });
    positionals(this, rest, []);
    const portText = values.port ?? io.env.HERALD_LISTEN_PORT?.trim();
    const port = portText ? integer(this, "--port", portText, 0, 65_535) : DEFAULT_PORT;
    const events = splitList(values.events);
    if (values.events !== undefined && !events?.length) throw usageError(this, "--events needs event types");
    if (values.keep && !events) throw usageError(this, "--keep goes with --events");
    const secrets = values.secret?.length
      ? values.secret
      : (io.env.HERALD_WEBHOOK_SECRET ?? "").split(/[\s,]+/).filter(Boolean);
    for (const s of secrets) {
      if (!s.startsWith("whsec_"))
        throw usageError(this, "a secret starts with whsec_ (as npx herald webhooks create prints it)");
    }
    const forwardUrl = values.forward ?? null;
    if (
      forwardUrl !== null &&
      (!URL.canParse(forwardUrl) || !/^https?:$/.test(new URL(forwardUrl).protocol))
    ) {
      throw usageError(this, `--forward must be an http(s) URL, not "${forwardUrl}"`);
    }
    if (values["reject-invalid"] && secrets.length === 0 && !events) {
      throw usageError(this, "--reject-invalid needs a secret (--events, --secret or HERALD_WEBHOOK_SECRET)");
    }
    const options: ListenOptions = {
      secrets: [...secrets],
      forwardUrl,
      rejectInvalid: values["reject-invalid"],
      json: values.json,
      toleranceSeconds:
        values.tolerance === undefined ? 300 : integer(this, "--tolerance", values.tolerance, 0, 86_400),
    };
    const say = options.json ? io.err : io.out;

    const server = createServer((req, res) => {
      handleDelivery(req, res, io, options).catch((e: unknown) => {
        io.err(`herald listen: ${(e as Error).message}`);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", (e: NodeJS.ErrnoException) =>
        reject(
          e.code === "EADDRINUSE"
            ? new CliError(`port ${port} on 127.0.0.1 is in use; pass --port N (0 picks a free one)`)
            : e,
        ),
      );
      server.listen(port, "127.0.0.1", () => resolve());
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const closeServer = () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    let own: OwnEndpoint | null = null;
    if (events) {
      try {
        own = await ownEndpoint(io, deps, url, events);
      } catch (e) {
        await closeServer();
        throw e;
      }
      // Verified with first: it is the secret Herald signs with.
      options.secrets.unshift(own.secret);
    }
    say(`Listening on ${url}`);
    if (own) {
      const w = own.webhook;
      say(
        [
          `${own.reused ? "Reusing" : "Created"} endpoint ${w.id} → ${url} for ${w.events.join(", ")}`,
          values.keep
            ? "It stays when listen stops (--keep)."
            : "It is deleted when listen stops (pass --keep to keep it).",
          `Signing secret (shown once; deliveries are verified with it): ${own.secret}`,
        ].join("\n"),
      );
    }
    say(
      options.secrets.length > 0
        ? `Verifying with ${options.secrets.length} ${options.secrets.length === 1 ? "secret" : "secrets"}.`
        : "No secret: deliveries are printed but not verified (pass --events, --secret whsec_... or set HERALD_WEBHOOK_SECRET).",
    );
    if (forwardUrl) say(`Forwarding each delivery to ${forwardUrl}`);
    say(
      [
        ...(own
          ? []
          : [
              "Register it with a server started as HERALD_ALLOW_HTTP_URLS=true HERALD_ALLOW_PRIVATE_NETWORKS=true npm start:",
              `  npx herald webhooks create --url ${url} --events message.delivered,message.bounced,...`,
              "(or let listen do it: npx herald listen --events message.delivered,...)",
            ]),
        "Ctrl-C stops.",
        "",
      ].join("\n"),
    );

    await stopRequested(deps.signal);
    await closeServer();
    let code = 0;
    if (own && !values.keep) {
      const id = own.webhook.id;
      try {
        await own.api.call(own.api.client.DELETE("/api/v1/webhooks/{id}", { params: { path: { id } } }));
        say(`Deleted endpoint ${id}.`);
      } catch (e) {
        io.err(
          `herald listen: could not delete endpoint ${id} (${(e as Error).message}); delete it with npx herald webhooks delete ${id}`,
        );
        code = 1;
      }
    }
    say("Stopped.");
    return code;
  },
};
