import type { EventType, Webhook } from "../../clients/typescript/client.ts";
import { type Api, connectApi, listPages, unreachableMessage } from "./api.ts";
import type { CliDeps } from "./command.ts";
import { CliError, type Io } from "./io.ts";
import { type ListenOptions, type ListenRecord, receiveDelivery } from "./listen-receiver.ts";

// `herald listen --events` without --port (ADR 29): Herald streams the session's signed deliveries to
// this process over its own authenticated connection (server-sent events); each is verified, printed,
// forwarded when asked, and answered by POST. Nothing listens on this machine, and Herald delivers to
// no address.

/** A `delivery` event's data: the signed request's headers and exact body. */
interface StreamedDelivery {
  id: string;
  headers: Record<string, string>;
  body: string;
}

/** How long to wait before opening the stream again after it dropped (Herald restarted, a network blip). */
const RECONNECT_MS = 1_000;

/** The session `listen` holds: its endpoint, the secret it verifies with, the open stream. */
export interface OpenSession {
  api: Api;
  webhook: Webhook;
  secret: string;
  reused: boolean;
  stream: Response;
}

const isListenEndpoint = (w: Webhook) => w.url.startsWith("listen://");

/** GET the session's stream; the Response when Herald answered 200, else the status (409: taken). */
async function openStream(api: Api, io: Io, deps: CliDeps, id: string, signal: AbortSignal) {
  const url = `${api.baseUrl}/api/v1/listen-sessions/${id}/stream`;
  const request = new Request(url, {
    headers: { Authorization: `Bearer ${io.env.HERALD_TOKEN?.trim()}`, Accept: "text/event-stream" },
    signal,
  });
  let res: Response;
  try {
    res = await (deps.fetch ?? fetch)(request);
  } catch (e) {
    if (signal.aborted) throw e;
    throw new CliError(unreachableMessage(api.baseUrl, e));
  }
  if (res.status === 200 && res.body) return res;
  const text = await res.text().catch(() => "");
  return { status: res.status, text };
}

/**
 * Opens a session for `events`: the newest listen endpoint of the project no other `listen` is
 * receiving (left by --keep or by a listen that was killed: what failed meanwhile is retried to this
 * one) gets these event types, is enabled and its secret rotated (a secret is shown only once);
 * without one, a new session is created.
 */
export async function openSession(
  io: Io,
  deps: CliDeps,
  events: string[],
  signal: AbortSignal,
): Promise<OpenSession> {
  const api = connectApi(io, deps);
  const all = await listPages(
    async (cursor) =>
      (await api.call(api.client.GET("/api/v1/webhooks", { params: { query: { limit: 100, cursor } } })))
        .data,
    { all: true },
  );
  for (const w of all.data.filter(isListenEndpoint)) {
    const stream = await openStream(api, io, deps, w.id, signal);
    if (!(stream instanceof Response)) {
      if (stream.status === 409 || stream.status === 404) continue;
      throw new CliError(`${stream.status} opening listen session ${w.id}: ${stream.text}`);
    }
    await api.call(
      api.client.PATCH("/api/v1/webhooks/{id}", {
        params: { path: { id: w.id } },
        body: { events: events as EventType[], enabled: true },
      }),
    );
    const { data } = await api.call(
      api.client.POST("/api/v1/webhooks/{id}/rotate", { params: { path: { id: w.id } }, body: {} }),
    );
    return { api, webhook: data, secret: data.secret, reused: true, stream };
  }
  const { data } = await api.call(
    api.client.POST("/api/v1/listen-sessions", {
      body: {
        events: events as EventType[],
        description: "herald listen (deleted when it stops, unless --keep)",
      },
    }),
  );
  const stream = await openStream(api, io, deps, data.id, signal);
  if (!(stream instanceof Response))
    throw new CliError(`${stream.status} opening the listen session: ${stream.text}`);
  return { api, webhook: data, secret: data.secret, reused: false, stream };
}

/** What the attempt is recorded with: the forward target's answer, 502 when it gave none, else listen's. */
export function answerOf(r: ListenRecord): { status: number; body: string } {
  if (r.forward) {
    return r.forward.status === null
      ? { status: 502, body: `herald listen: forwarding to ${r.forward.url} failed (${r.forward.error})` }
      : { status: r.forward.status, body: `herald listen: forwarded to ${r.forward.url}` };
  }
  return r.answered === 400
    ? { status: 400, body: `${r.reason}` }
    : { status: 200, body: "herald listen: ok" };
}

/**
 * The frames of a server-sent event stream: each `{event, data}` once its blank line arrives; comments
 * (heartbeats) are skipped.
 */
export async function* sseEvents(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<{ event: string; data: string }> {
  const decoder = new TextDecoder();
  let buffer = "";
  const reader = body.getReader();
  // Ends a pending read when listen stops, whatever fetch made the body (an abort may not reach it).
  const cancel = () => void reader.cancel().catch(() => {});
  signal?.addEventListener("abort", cancel, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = "message";
        const data: string[] = [];
        for (const line of frame.split("\n")) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length > 0) yield { event, data: data.join("\n") };
        end = buffer.indexOf("\n\n");
      }
    }
  } finally {
    signal?.removeEventListener("abort", cancel);
    // A reader that stops early closes the stream: the server sees the client go.
    await reader.cancel().catch(() => {});
  }
}

/** Handles one delivery: verify, print, forward, then answer Herald (a late answer is only reported). */
async function handle(session: OpenSession, io: Io, o: ListenOptions, d: StreamedDelivery): Promise<void> {
  const record = await receiveDelivery(
    Object.entries(d.headers),
    new TextEncoder().encode(d.body) as Uint8Array<ArrayBuffer>,
    io,
    o,
  );
  const { api, webhook } = session;
  const answer = answerOf(record);
  try {
    await api.call(
      api.client.POST("/api/v1/listen-sessions/{id}/answers", {
        params: { path: { id: webhook.id } },
        body: { message_id: d.id, status: answer.status, body: answer.body },
      }),
    );
  } catch (e) {
    io.err(
      `herald listen: Herald did not take the answer for ${record.event_id ?? d.id}: ${(e as Error).message}`,
    );
  }
}

/**
 * Receives the session's deliveries until `signal` aborts, opening the stream again whenever it drops.
 * Rejects when the session is gone (its endpoint deleted) or Herald refuses the stream.
 */
export async function receive(
  session: OpenSession,
  io: Io,
  deps: CliDeps,
  o: ListenOptions,
  signal: AbortSignal,
) {
  const say = o.json ? io.err : io.out;
  let stream: Response | null = session.stream;
  while (!signal.aborted) {
    if (stream?.body) {
      try {
        for await (const { event, data } of sseEvents(stream.body, signal)) {
          if (event === "delivery") void handle(session, io, o, JSON.parse(data) as StreamedDelivery);
        }
      } catch {
        // A dropped connection or an abort: decided below.
      }
      if (signal.aborted) return;
      say("The connection to Herald dropped; reconnecting...");
    }
    await new Promise<void>((r) => {
      const done = () => {
        clearTimeout(timer);
        r();
      };
      const timer = setTimeout(done, RECONNECT_MS);
      signal.addEventListener("abort", done, { once: true });
    });
    if (signal.aborted) return;
    const next = await openStream(session.api, io, deps, session.webhook.id, signal).catch((e: unknown) => {
      if (signal.aborted) return null;
      io.err(`herald listen: ${(e as Error).message}`);
      return null;
    });
    if (next instanceof Response) {
      say("Reconnected.");
      stream = next;
    } else if (next && next.status === 404) {
      throw new CliError(`listen session ${session.webhook.id} is gone (its endpoint was deleted)`);
    } else if (next && next.status === 401) {
      throw new CliError(
        `Herald at ${session.api.baseUrl} no longer accepts HERALD_TOKEN (401): ${next.text}`,
      );
    } else {
      // 409 after a drop: Herald has not yet noticed the old connection is dead; other statuses pass too.
      stream = null;
    }
  }
}
