import type { Options, PostgresType, Sql } from "postgres";
import { StoreUnavailableError } from "../../app/ports/store.ts";
import { openPostgres } from "./connection.ts";
import { translate } from "./errors.ts";

/** How long a readiness ping may take before the database counts as not answering. */
export const PING_DEADLINE_MS = 3000;
/** How long the pool may take to answer the ping before a fresh connection is asked beside it. */
export const FRESH_AFTER_MS = 250;
/** How long the pool's ping must stay unanswered, while a fresh connection answered, before it is renewed. */
export const RENEW_AFTER_MS = 500;

/** Rejects with StoreUnavailableError unless `sql` answers within `deadlineMs`. */
export async function ping(sql: Sql, deadlineMs = PING_DEADLINE_MS): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      sql`SELECT 1`,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new StoreUnavailableError()), deadlineMs);
      }),
    ]);
  } catch (e) {
    throw translate(e);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A ping that heals a dead pool: when the process's own connections do not answer but a brand-new one
 * does, the database is fine and only the pool's connections are dead (a partition that dropped their
 * packets, a proxy that silenced them), so the pool is renewed; the next ping, and every caller, uses
 * fresh connections. The fresh connection is asked as soon as the pool is slow (FRESH_AFTER_MS), not after
 * the pool's whole deadline: after such an outage /readyz answers within about RENEW_AFTER_MS, not 3 s.
 * True when it renewed the pool.
 */
export async function pingRenewing(sql: Sql, renewable: Renewable): Promise<boolean> {
  const started = Date.now();
  const own = ping(sql).then(
    () => null,
    (e: unknown) => e,
  );
  const early = await Promise.race([own, after(renewable.early ? FRESH_AFTER_MS : PING_DEADLINE_MS, "slow")]);
  if (early === null) return false;
  // Never asks for the server's types (SELECT 1 needs none): ended while asking, postgres.js would reject
  // that question with nobody listening, an unhandled rejection (connection.ts, typesKnown).
  const fresh = openPostgres(renewable.url, { ...renewable.options, max: 1, fetch_types: false });
  try {
    const freshAnswers = ping(fresh).then(
      () => true,
      () => false,
    );
    const first = await Promise.race([own.then((e) => (e === null ? "own" : "own failed")), freshAnswers]);
    if (first === "own") return false;
    if (first === "own failed" || first === false) {
      // One of the two failed: the other decides.
      const e = await own;
      if (e === null) return false;
      if (!(await freshAnswers)) throw e; // The database itself does not answer: an outage, not a dead pool.
    } else {
      // Only the fresh connection answered so far: the pool gets until RENEW_AFTER_MS, as a slow one may.
      const late = await Promise.race([
        own,
        after(Math.max(0, started + RENEW_AFTER_MS - Date.now()), "slow" as const),
      ]);
      if (late === null) return false;
    }
  } finally {
    void fresh.end({ timeout: 0 }).catch(() => {});
  }
  renewable.renew();
  await ping(sql);
  return true;
}

/** What renews the pool; `early`: ask a fresh connection as soon as the pool is slow, not only when it failed. */
export interface Renewable {
  url: string;
  options: Options<Record<string, PostgresType>>;
  renew(finishWithinS?: number): void;
  early: boolean;
}

/** Resolves with `value` after `ms`. */
export function after<T>(ms: number, value: T): Promise<T> {
  return new Promise((r) => setTimeout(() => r(value), ms));
}
