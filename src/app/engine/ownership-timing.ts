import type { LivenessTiming } from "./liveness.ts";

// The timing of shard leases (ADR 9) and of this process's proof of life (ADR 25).

export interface OwnershipOptions {
  /** How long a lease and a heartbeat last without renewal (HERALD_DELIVERY_TIMEOUT + HERALD_LEASE_MARGIN). */
  leaseMs: number;
  /**
   * How long after a renewal began this process may still start sends in the shard (the margin less a
   * safety allowance): a send started then ends, timeout included, before the lease can expire.
   */
  claimWindowMs: number;
  /** How often leases and the heartbeat are renewed. */
  renewEveryMs: number;
  /** How often shard heads and live processes are read (takeovers, rebalancing). */
  tickMs: number;
  /** How long a shard being given back may wait for its in-flight work before it is given back anyway. */
  drainMs: number;
  /** How this process proves it is alive; by default what suits the store's kind (liveness.ts). */
  liveness?: LivenessTiming;
}

/** The timing of leases from the engine's options (HERALD_DELIVERY_TIMEOUT, HERALD_LEASE_MARGIN). */
export function ownershipTiming(o: {
  deliveryTimeoutMs: number;
  leaseMarginMs?: number;
  ownershipTickMs?: number;
}): OwnershipOptions {
  const marginMs = o.leaseMarginMs ?? 60_000;
  // Pauses and clock skew up to this much cannot make two owners start sends in one shard (ADR 9).
  const safetyMs = Math.min(1_000, marginMs / 4);
  return {
    leaseMs: o.deliveryTimeoutMs + marginMs,
    claimWindowMs: marginMs - safetyMs,
    renewEveryMs: marginMs / 4,
    tickMs: o.ownershipTickMs ?? Math.min(1_000, marginMs / 4),
    drainMs: o.deliveryTimeoutMs + 5_000,
  };
}
