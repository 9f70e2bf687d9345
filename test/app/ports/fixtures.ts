import type { StoredEvent } from "../../../src/app/ports/events.ts";
import type { Cursor, Page, PageRequest, Scope } from "../../../src/app/ports/paging.ts";
import type { HandedWork } from "../../../src/app/ports/store.ts";
import type { TokenRecord } from "../../../src/app/ports/tokens.ts";
import type { Delivery } from "../../../src/domain/delivery.ts";
import type { Endpoint } from "../../../src/domain/endpoint.ts";

export const T0 = new Date("2026-03-01T12:00:00.000Z");

/** T0 shifted by `ms` milliseconds. */
export const at = (ms: number): Date => new Date(T0.getTime() + ms);

export const uuid = (): string => globalThis.crypto.randomUUID();

export const newScope = (): Scope => ({ tenantId: uuid(), projectId: uuid() });

export function anEndpoint(scope: Scope, over: Partial<Endpoint> = {}): Endpoint {
  return {
    id: uuid(),
    tenantId: scope.tenantId,
    projectId: scope.projectId,
    url: "https://receiver.example/hooks",
    events: ["message.delivered"],
    description: null,
    enabled: true,
    disabledReason: null,
    secrets: [{ sealed: "sealed-current", expiresAt: null }],
    createdAt: T0,
    updatedAt: T0,
    failingSince: null,
    failingNotice: null,
    disabledAt: null,
    disabledNotice: null,
    headers: [],
    signatureScheme: "herald-v1",
    filter: null,
    rateLimit: null,
    ordering: "none",
    clientCertificate: null,
    destination: null,
    ...over,
  };
}

export function anEvent(scope: Scope, over: Partial<StoredEvent> = {}): StoredEvent {
  const id = over.id ?? `evt_${uuid().replaceAll("-", "")}`;
  return {
    id,
    tenantId: scope.tenantId,
    projectId: scope.projectId,
    type: "message.delivered",
    body: JSON.stringify({ id, type: "message.delivered", data: { n: 1 } }),
    occurredAt: T0,
    createdAt: T0,
    targets: [],
    fanoutPending: true,
    resourceId: uuid(),
    recipientKey: null,
    sequence: (over.createdAt ?? T0).getTime() * 1000,
    traceparent: null,
    ...over,
  };
}

export function aDelivery(scope: Scope, over: Partial<Delivery> = {}): Delivery {
  return {
    id: uuid(),
    tenantId: scope.tenantId,
    projectId: scope.projectId,
    webhookId: uuid(),
    eventId: `evt_${uuid().replaceAll("-", "")}`,
    eventType: "message.delivered",
    attempt: 1,
    trigger: "automatic",
    status: "pending",
    url: "https://receiver.example/hooks",
    responseStatus: null,
    responseBody: null,
    error: null,
    durationMs: null,
    scheduledAt: T0,
    attemptedAt: null,
    nextAttemptAt: null,
    createdAt: T0,
    erasedAt: null,
    sequence: (over.createdAt ?? T0).getTime() * 1000,
    signatureScheme: null,
    headerNames: null,
    ...over,
  };
}

/** A publish's event and its first deliveries to `n` endpoints, as the events use case writes them. */
export function publishWork(n: number, data = "d"): HandedWork {
  const scope = newScope();
  const event = anEvent(scope, { body: JSON.stringify({ data }), traceparent: null });
  const deliveries = Array.from({ length: n }, () =>
    aDelivery(scope, {
      eventId: event.id,
      eventType: event.type,
      sequence: event.sequence,
      scheduledAt: event.createdAt,
      createdAt: event.createdAt,
    }),
  );
  return { event: { ...event, targets: deliveries.map((d) => d.webhookId) }, deliveries };
}

export function aToken(scope: Scope, over: Partial<TokenRecord> = {}): TokenRecord {
  const hash = uuid().replaceAll("-", "").repeat(2);
  return {
    id: uuid(),
    hash,
    prefix: "hrld_abcd",
    tenantId: scope.tenantId,
    projectId: scope.projectId,
    name: null,
    createdAt: T0,
    revokedAt: null,
    ...over,
  };
}

/** Newest first by (createdAt, id), both descending, written independently of the adapters. */
export function sortNewestFirst<T extends { id: string; createdAt: Date }>(items: readonly T[]): T[] {
  return [...items].sort(
    (a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
  );
}

export function sortOldestFirst<T extends { id: string; createdAt: Date }>(items: readonly T[]): T[] {
  return sortNewestFirst(items).reverse();
}

/** Follows `next` until the end; fails rather than loops when a cursor never ends. */
export async function allPages<T>(
  limit: number,
  fetch: (page: PageRequest) => Promise<Page<T>>,
): Promise<{ pages: T[][]; cursors: (Cursor | null)[] }> {
  const pages: T[][] = [];
  const cursors: (Cursor | null)[] = [];
  let cursor: Cursor | null = null;
  for (let i = 0; i < 50; i++) {
    const page: Page<T> = await fetch({ limit, cursor });
    pages.push(page.data);
    cursors.push(page.next);
    if (!page.next) return { pages, cursors };
    cursor = page.next;
  }
  throw new Error("paging did not end after 50 pages");
}

export const ids = (items: readonly { id: string }[]): string[] => items.map((i) => i.id);
export const sortedIds = (items: readonly { id: string }[]): string[] => ids(items).sort();
