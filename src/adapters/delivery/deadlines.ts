/** One watched exchange. `settle()` from its owner stops the expiry and lets go of it. */
export class Deadline {
  private onExpire: (() => void) | null;

  readonly at: number;
  constructor(at: number, onExpire: () => void) {
    this.at = at;
    this.onExpire = onExpire;
  }

  get settled(): boolean {
    return this.onExpire === null;
  }

  /** The exchange finished: its expiry will not run, and the queue keeps no reference to it. */
  settle(): void {
    this.onExpire = null;
  }

  /** Runs the expiry once, unless settled. */
  expire(): void {
    const f = this.onExpire;
    this.onExpire = null;
    f?.();
  }
}

/**
 * Fires expiries for exchanges that all share one time limit, with a single timer. Because every
 * deadline is `now + limit`, they arrive in order: a FIFO queue holds them, the timer is armed for the
 * oldest unsettled one, and settled entries are dropped as the head passes them. A timer and an
 * AbortController per request cost more main-thread time than the rest of a keep-alive POST.
 */
export class DeadlineQueue {
  private queue: Deadline[] = [];
  private head = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  private readonly limitMs: number;
  private readonly now: () => number;
  constructor(limitMs: number, now: () => number = () => performance.now()) {
    this.limitMs = limitMs;
    this.now = now;
  }

  /** Watches an exchange starting now; `onExpire` runs once its limit passes unless it settles first. */
  watch(onExpire: () => void): Deadline {
    const d = new Deadline(this.now() + this.limitMs, onExpire);
    this.queue.push(d);
    if (this.timer === null) this.arm(d.at);
    return d;
  }

  /** Entries held (settled ones are dropped when the head reaches them). */
  get size(): number {
    return this.queue.length - this.head;
  }

  private arm(at: number) {
    this.timer = setTimeout(() => this.fire(), Math.max(1, Math.ceil(at - this.now())));
    // The timer alone does not keep a process alive; in-flight requests hold it open themselves.
    (this.timer as { unref?: () => void }).unref?.();
  }

  private fire() {
    this.timer = null;
    const now = this.now();
    while (this.head < this.queue.length) {
      const d = this.queue[this.head]!;
      if (!d.settled && d.at > now) break;
      this.head++;
      d.expire();
    }
    while (this.head < this.queue.length && this.queue[this.head]!.settled) this.head++;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
      return;
    }
    if (this.head > 1024) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.arm(this.queue[this.head]!.at);
  }
}
