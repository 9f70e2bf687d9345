import { MongoClient } from "mongodb";

/**
 * Whether the process's own database client still works, told apart from whether the database is up.
 *
 * An outage (the database is down or unreachable) is not a reason to restart Herald: /readyz answers 503
 * and the driver reconnects by itself when the database returns. A *wedged* client is: every command of
 * the process has been failing for `wedgedAfterMs` while a brand-new connection to the same server, opened
 * just for the check, succeeds. Then the database is fine and only this process cannot use it, and only a
 * restart helps, so /healthz fails and a supervisor restarts the process (docs/adr/0010-database-outages.md).
 *
 * Costs nothing while the store works: every successful command the client reports (`noteSuccess`)
 * counts as proof of life, so the probes run only after `everyMs` without one.
 */
export interface StoreLiveness {
  /** Call on every successful command of the process's own client. */
  noteSuccess(): void;
  /** null while live; otherwise why the store is considered wedged. */
  wedged(): string | null;
  /** Runs one check now (the timer calls it every `everyMs`); resolves when done. */
  check(): Promise<void>;
  stop(): void;
}

export interface StoreLivenessOptions {
  /** A command on the process's own client (e.g. ping); rejects when it fails. */
  pingOwn(): Promise<void>;
  /** A command on a fresh connection to the same server, opened and closed for this check. */
  pingFresh(): Promise<void>;
  /** How often to check when no command succeeded meanwhile. */
  everyMs: number;
  /** How long the own client may fail while fresh connections succeed before it counts as wedged. */
  wedgedAfterMs: number;
  /** Each probe is abandoned (counted as failed) after this long. */
  probeTimeoutMs: number;
  now(): number;
  /** Told when the verdict changes. */
  onChange?(wedged: string | null): void;
  /** Start a timer (default true; tests drive `check()` themselves). */
  timer?: boolean;
}

export function storeLiveness(o: StoreLivenessOptions): StoreLiveness {
  let lastSuccess = o.now();
  // Since when the own client fails while a fresh connection succeeds; null when not seen.
  let divergingSince: number | null = null;
  let verdict: string | null = null;
  let running: Promise<void> | null = null;
  const set = (next: string | null) => {
    if (next !== verdict) {
      verdict = next;
      o.onChange?.(next);
    }
  };
  const bounded = (p: () => Promise<void>) =>
    new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), o.probeTimeoutMs);
      p().then(
        () => {
          clearTimeout(timer);
          resolve(true);
        },
        () => {
          clearTimeout(timer);
          resolve(false);
        },
      );
    });
  const run = async () => {
    if (o.now() - lastSuccess < o.everyMs) {
      divergingSince = null;
      set(null);
      return;
    }
    if (await bounded(o.pingOwn)) {
      lastSuccess = o.now();
      divergingSince = null;
      set(null);
      return;
    }
    if (!(await bounded(o.pingFresh))) {
      // The database itself does not answer: an outage, which /readyz reports; no restart would help.
      divergingSince = null;
      set(null);
      return;
    }
    const at = o.now();
    divergingSince ??= at;
    if (at - divergingSince >= o.wedgedAfterMs) {
      set(
        `the database answers new connections, but this process's client has failed every command for ${Math.round((at - divergingSince) / 1000)} s`,
      );
    }
  };
  const check = () => {
    running ??= run().finally(() => {
      running = null;
    });
    return running;
  };
  const interval = o.timer === false ? null : setInterval(() => void check(), o.everyMs);
  // Never keeps the process alive by itself.
  (interval as { unref?: () => void } | null)?.unref?.();
  return {
    noteSuccess() {
      lastSuccess = o.now();
    },
    wedged: () => verdict,
    check,
    stop() {
      if (interval) clearInterval(interval);
    },
  };
}

/** A ping over a connection of its own: opened, used once and closed. Never shares the process's pool. */
export function freshPing(uri: string, timeoutMs: number): () => Promise<void> {
  return async () => {
    const client = new MongoClient(uri, {
      serverSelectionTimeoutMS: timeoutMs,
      connectTimeoutMS: timeoutMs,
      socketTimeoutMS: timeoutMs,
      maxPoolSize: 1,
    });
    try {
      await client.connect();
      await client.db("admin").command({ ping: 1 });
    } finally {
      await client.close().catch(() => {});
    }
  };
}
