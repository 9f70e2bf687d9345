// The listen sessions this process holds (ADR 29): for each session key, the one open stream to a
// `herald listen` CLI, and the deliveries written to it that wait for the CLI's answer. One owner of
// this state: the stream route attaches and answers, the listen sender delivers.

/** One delivery as the CLI receives it: the signed request's headers and its exact body. */
export interface ListenMessage {
  /** Names this message in the CLI's answer; not the delivery id (a retry is a new message). */
  id: string;
  headers: Record<string, string>;
  body: string;
}

/** What the CLI answered for a message: its forward target's status, or 2xx when it only printed. */
export interface ListenAnswer {
  status: number;
  body: string | null;
}

/**
 * How a delivery to a session ended: answered, or why not. `no_session`: no CLI holds this session's
 * stream on this process; `timeout`: no answer in time; `closed`: the stream ended before the answer.
 */
export type ListenResult = { answer: ListenAnswer } | { error: "no_session" | "timeout" | "closed" };

/** Where a session's frames go: the open stream (server-sent events). */
export interface ListenSink {
  /** Writes one whole frame. */
  push(frame: string): void;
  /** Ends the stream (Herald stops, or a newer attach replaced it). */
  end(): void;
}

interface Attached {
  /** `tenant/project` of the token that opened the stream: only that project may answer. */
  owner: string;
  sink: ListenSink;
}

interface Waiting {
  session: string;
  sink: ListenSink;
  settle(result: ListenResult): void;
}

/** One server-sent event: `event:` line, one `data:` line of JSON (JSON never holds a raw newline). */
export function sseFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export interface ListenSessions {
  /**
   * Holds `sink` as the session's stream and returns the detach function; null when the session already
   * has a stream here (another CLI listens on it: it is not taken away from that one).
   */
  attach(session: string, owner: string, sink: ListenSink): (() => void) | null;
  /** True while a stream is attached for the session on this process. */
  isOpen(session: string): boolean;
  /** True once `close` ran: Herald is stopping, and no stream is attached any more. */
  isClosed(): boolean;
  /** Writes the message to the session's stream and waits up to `timeoutMs` for its answer. */
  deliver(session: string, message: Omit<ListenMessage, "id">, timeoutMs: number): Promise<ListenResult>;
  /** Settles a waiting message; false when none of that id waits for this session and owner. */
  answer(session: string, owner: string, messageId: string, answer: ListenAnswer): boolean;
  /** Ends every stream; what waits fails as `closed`. For a stop: an open stream would hold the server. */
  close(): void;
}

export function createListenSessions(newId: () => string = () => crypto.randomUUID()): ListenSessions {
  const streams = new Map<string, Attached>();
  const waiting = new Map<string, Waiting>();
  let closed = false;

  const failWaiting = (sink: ListenSink) => {
    for (const w of [...waiting.values()]) if (w.sink === sink) w.settle({ error: "closed" });
  };

  return {
    attach(session, owner, sink) {
      if (closed || streams.has(session)) return null;
      streams.set(session, { owner, sink });
      return () => {
        if (streams.get(session)?.sink !== sink) return;
        streams.delete(session);
        failWaiting(sink);
      };
    },

    isOpen: (session) => streams.has(session),

    isClosed: () => closed,

    deliver(session, message, timeoutMs) {
      const stream = streams.get(session);
      if (!stream) return Promise.resolve({ error: "no_session" });
      const id = newId();
      return new Promise<ListenResult>((resolve) => {
        const timer = setTimeout(() => settle({ error: "timeout" }), timeoutMs);
        const settle = (result: ListenResult) => {
          if (!waiting.delete(id)) return;
          clearTimeout(timer);
          resolve(result);
        };
        waiting.set(id, { session, sink: stream.sink, settle });
        try {
          stream.sink.push(sseFrame("delivery", { id, headers: message.headers, body: message.body }));
        } catch {
          settle({ error: "closed" });
        }
      });
    },

    answer(session, owner, messageId, answer) {
      const w = waiting.get(messageId);
      if (!w || w.session !== session || streams.get(session)?.owner !== owner) return false;
      w.settle({ answer });
      return true;
    },

    close() {
      closed = true;
      for (const [session, { sink }] of [...streams]) {
        streams.delete(session);
        failWaiting(sink);
        sink.end();
      }
    },
  };
}
