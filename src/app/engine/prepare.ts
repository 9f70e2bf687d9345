import { isReservedHeaderName } from "../../domain/custom-headers.ts";
import type { Delivery } from "../../domain/delivery.ts";
import { mapCredentials } from "../../domain/destination-values.ts";
import { activeSecrets, type Endpoint } from "../../domain/endpoint.ts";
import type { AttemptResult } from "../ports/deliveries.ts";
import type { StoredEvent } from "../ports/events.ts";
import type { Repositories } from "../ports/store.ts";
import type { Clock, SecretCipher } from "../ports/system.ts";
import type { Claimed, Prepared } from "./work.ts";

const CACHE_LIMIT = 10_000;
/**
 * How long an automatic first attempt whose event is not stored is held back before it is cancelled.
 * A publish stores the deliveries first and then the event (ADR 2): for a moment the event is on its
 * way, and after a crash in between, a repeat with the same Idempotency-Key may still store it.
 */
export const EVENT_WAIT_MS = 60_000;
/** How far a delivery waiting for its event is moved each time it is found so. */
export const EVENT_RECHECK_MS = 5_000;

/** A record finished without a send: the endpoint or event is gone (cancelled), or it is disabled (skipped). */
export function finishedWithoutSend(d: Delivery, status: "cancelled" | "skipped"): AttemptResult {
  return {
    id: d.id,
    status,
    responseStatus: null,
    responseBody: null,
    error: null,
    durationMs: null,
    attemptedAt: null,
    nextAttemptAt: null,
    next: null,
    acknowledges: null,
  };
}

/**
 * Stage 3, prepare: reads the claimed deliveries' endpoints (every time: a disable, a rotation or a
 * header change counts at once; only a publish's first attempt started within HANDOVER_FRESH_MS of it
 * uses the endpoint that publish read, see Claimed.endpoint) and events (kept for first attempts: an
 * event never changes, but it can be erased), opens the endpoints' secrets and custom header values
 * and client certificate key and broker credentials (kept: a sealed text always opens to the same text). Headers and the signature are made by the
 * sender from these, the endpoint's scheme and the event's bytes.
 */
export function preparer(deps: { repos: Repositories; cipher: SecretCipher; clock: Clock }) {
  const events = new Map<string, StoredEvent>();
  const secrets = new Map<string, string>();

  const open = async (sealed: string) => {
    let plain = secrets.get(sealed);
    if (plain === undefined) {
      plain = await deps.cipher.open(sealed);
      if (secrets.size >= CACHE_LIMIT) secrets.clear();
      secrets.set(sealed, plain);
    }
    return plain;
  };

  /**
   * The events of the claimed deliveries. Only an automatic first attempt may take its event from the
   * cache: every other attempt (a retry, a manual one) exists after its event may have been erased, and
   * an erasure in another process cannot reach this cache, so its event is read again (ADR 15). A
   * first attempt cached here was fanned out with its event, and an erasure cancels it with the event.
   */
  async function eventsOf(claimed: readonly Claimed[]): Promise<Map<string, StoredEvent>> {
    const read = new Set<string>();
    for (const { delivery: d } of claimed) {
      if (!fannedOut(d) || !events.has(d.eventId)) read.add(d.eventId);
    }
    if (read.size > 0) {
      const found = await deps.repos.events.getMany([...read]);
      // An event that is gone (erased, or past retention) leaves the cache with the read.
      for (const id of read) events.delete(id);
      if (events.size + found.length > CACHE_LIMIT) events.clear();
      for (const e of found) events.set(e.id, e);
    }
    return events;
  }

  /** An event this process just stored with its first deliveries: their attempts need not read it. */
  function remember(event: StoredEvent): void {
    if (events.size >= CACHE_LIMIT) events.clear();
    events.set(event.id, event);
  }

  async function prepare(
    claimed: readonly Claimed[],
  ): Promise<{ ready: Prepared[]; finished: AttemptResult[]; waiting: Delivery[] }> {
    const toRead = new Set<string>();
    for (const c of claimed) if (!c.endpoint) toRead.add(c.delivery.webhookId);
    const [byEvent, endpoints] = await Promise.all([
      eventsOf(claimed),
      toRead.size > 0 ? deps.repos.endpoints.getMany([...toRead]) : [],
    ]);
    const byEndpoint = new Map<string, Endpoint>(endpoints.map((e) => [e.id, e]));
    const now = deps.clock.now();
    const ready: Prepared[] = [];
    const finished: AttemptResult[] = [];
    const waiting: Delivery[] = [];
    for (const { delivery, endpoint: handed } of claimed) {
      const endpoint = handed ?? byEndpoint.get(delivery.webhookId);
      const event = byEvent.get(delivery.eventId);
      // A first attempt stored moments ago: its event may be on its way (see EVENT_WAIT_MS).
      if (endpoint && !event && mayAwaitEvent(delivery, now)) waiting.push(delivery);
      // The endpoint was deleted, or the event was erased or aged out of retention, or its publish
      // never finished, or a first attempt left by a publish that died before storing its event was
      // repeated with other targets (filters changed meanwhile): nothing is owed any more.
      else if (!endpoint || !event || !owed(delivery, event))
        finished.push(finishedWithoutSend(delivery, "cancelled"));
      else if (!endpoint.enabled) finished.push(finishedWithoutSend(delivery, "skipped"));
      else {
        const sealed = activeSecrets(endpoint.secrets, now).map((s) => s.sealed);
        const cached = sealed.map((s) => secrets.get(s));
        const plain = cached.every((x) => x !== undefined) ? cached : await Promise.all(sealed.map(open));
        const headers: [string, string][] = [];
        for (const h of endpoint.headers) {
          // A header stored before its name was reserved (traceparent, tracestate) is not sent: it would
          // stand beside, or in place of, Herald's own.
          if (isReservedHeaderName(h.name)) continue;
          headers.push([h.name, secrets.get(h.sealed) ?? (await open(h.sealed))]);
        }
        const cert = endpoint.clientCertificate;
        const clientCertificate = cert && {
          id: `${endpoint.id}:${cert.sealedKey}`,
          certificate: cert.certificate,
          key: secrets.get(cert.sealedKey) ?? (await open(cert.sealedKey)),
        };
        const destination =
          endpoint.destination &&
          (await mapCredentials(endpoint.destination, (s) => secrets.get(s) ?? open(s)));
        ready.push({ delivery, event, endpoint, secrets: plain, headers, clientCertificate, destination });
      }
    }
    return { ready, finished, waiting };
  }

  return Object.assign(prepare, { remember });
}

/** Made by a publish's fan-out (not a retry, a manual attempt or a recovery). */
const fannedOut = (d: Delivery) => d.attempt === 1 && d.trigger === "automatic";

/** A fan-out's first attempt is owed to the event's targets only; other attempts were asked for. */
const owed = (d: Delivery, event: StoredEvent) => !fannedOut(d) || event.targets.includes(d.webhookId);

const mayAwaitEvent = (d: Delivery, now: Date) =>
  fannedOut(d) && now.getTime() - d.createdAt.getTime() < EVENT_WAIT_MS;
