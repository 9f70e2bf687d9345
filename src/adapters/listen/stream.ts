import { type ListenSessions, sseFrame } from "./sessions.ts";

/**
 * Comments every few seconds keep the connection busy: Bun closes a connection idle for 10 s, proxies
 * often sooner, and a write is how a dead peer is noticed.
 */
export const HEARTBEAT_MS = 5_000;

/**
 * A session's stream of server-sent events: `ready` first, then one `delivery` per attempt, and a
 * comment as heartbeat; null when the session already has a stream here or Herald is stopping. The
 * client going away (the runtime cancels the body) detaches it.
 */
export function listenStream(
  sessions: ListenSessions,
  session: string,
  owner: string,
  ready: unknown,
  heartbeatMs = HEARTBEAT_MS,
): ReadableStream<Uint8Array> | null {
  if (sessions.isOpen(session) || sessions.isClosed()) return null;
  const encoder = new TextEncoder();
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let detach = () => {};
  let open = true;
  const stop = () => {
    open = false;
    clearInterval(heartbeat);
    detach();
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const push = (frame: string) => {
        if (open) controller.enqueue(encoder.encode(frame));
      };
      push(sseFrame("ready", ready));
      // Checked free just above, in the same turn: this attach cannot be refused.
      detach =
        sessions.attach(session, owner, {
          push,
          end() {
            if (!open) return;
            stop();
            controller.close();
          },
        }) ?? (() => {});
      heartbeat = setInterval(() => {
        try {
          push(": keep-alive\n\n");
        } catch {
          stop();
        }
      }, heartbeatMs);
      (heartbeat as { unref?: () => void }).unref?.();
    },
    cancel() {
      stop();
    },
  });
}
