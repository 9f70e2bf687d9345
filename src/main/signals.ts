/**
 * How long after a stop signal another one is the same request (docs/adr/0028-stop-signals.md). Ctrl-C
 * in a terminal signals the whole foreground process group, and `npm start` is in it and passes the
 * signal on to Herald as well: one key press arrives twice, 4–11 ms apart as measured, either one first.
 * A supervisor that signals a group does the same, and may mix SIGTERM and SIGINT. 500 ms is some 50 times
 * that echo, room for a busy machine to schedule npm late, and shorter than a person takes to see
 * "stopping" and press again.
 */
export const SAME_STOP_WITHIN_MS = 500;

/** What a stop signal asks: a graceful stop, nothing more (the same stop again), or "now". */
export type StopRequest = "graceful" | "echo" | "now";

/**
 * Tells each stop signal's meaning from when it came: the first asks for a graceful stop; any signal
 * (SIGINT or SIGTERM alike) within `withinMs` of that first one is its echo; the first one after that
 * means "now", and what follows it (its own echo) is nothing more. Measured from the first signal, not
 * the last, so signals that keep coming still end in "now".
 */
export function stopSignals(now: () => number, withinMs = SAME_STOP_WITHIN_MS): () => StopRequest {
  let first: number | null = null;
  let atOnce = false;
  return () => {
    const t = now();
    if (first === null) {
      first = t;
      return "graceful";
    }
    if (atOnce || t - first <= withinMs) return "echo";
    atOnce = true;
    return "now";
  };
}
