import { expect } from "vitest";
import {
  type Delivery,
  type HeraldClient,
  unwrap,
  type WebhookWithSecret,
} from "../../clients/typescript/client.ts";
import { allDeliveries, type DeliveryWorld, deliveryWorld, waitUntil } from "../e2e/delivery-support.ts";
import { BROKERS_REQUIRED, type BrokerServer } from "./broker-server.ts";
import type { Consumed } from "./consumed.ts";
import {
  eventOf,
  everyAnswer,
  expectNoCredential,
  publishAbout,
  verifyConsumed,
} from "./destinations-e2e.ts";
import type { HeraldProcess, Runtime } from "./herald-process.ts";

// The set-up the whole-system destination files (test/e2e/destinations-*.test.ts) share: the guard that
// skips without the broker (fails under CI), one Herald process on a database of the file's own, events
// published about a rotation of resources, endpoints made through the API, and the checks every file
// makes: the broker killed and started again with nothing lost across the failed attempts, and no
// credential in any answer or log line.

/** Throws under CI when the broker cannot be had (`missing` says why); answers the describe's title. */
export function brokerTitle(what: string, missing: string | null): string {
  if (missing && BROKERS_REQUIRED) throw new Error(`CI needs ${what}: ${missing}`);
  return missing ? ` (skipped: ${missing})` : "";
}

/** Herald's settings for a file whose broker goes away: short sends, retries for as long as a restart takes. */
export const OUTAGE_ENV: Record<string, string> = {
  HERALD_DELIVERY_TIMEOUT: "3s",
  HERALD_RETRY_SCHEDULE: Array.from({ length: 60 }, (_, i) => (i < 3 ? "500ms" : "3s")).join(","),
};

export interface DestinationSystem {
  world: DeliveryWorld;
  herald: HeraldProcess;
  client: HeraldClient;
  /** Published event ids with their resource, in acceptance order. */
  published: { id: string; resource: string }[];
  /** Publishes `n` message.delivered events, their resources taken in turn from the file's list. */
  publish(n: number): Promise<void>;
  /** The published event ids, sorted. */
  ids(): string[];
  /** POST /webhooks with `body` (kind and its object; events default to message.delivered). */
  create(body: Record<string, unknown>): Promise<WebhookWithSecret>;
  close(): Promise<void>;
}

/**
 * A database named after `prefix` and a Herald process on it (`runtime`, Node by default) with `env`
 * beside the delivery world's defaults; events are about `resources`, in turn.
 */
export async function destinationSystem(
  prefix: string,
  resources: readonly string[],
  env: Record<string, string> = {},
  runtime: Runtime = "node",
): Promise<DestinationSystem> {
  const world = await deliveryWorld(prefix, env);
  let herald: HeraldProcess;
  try {
    herald = await world.start({}, { runtime });
  } catch (e) {
    await world.close();
    throw e;
  }
  const client = world.client(herald.baseUrl);
  const published: DestinationSystem["published"] = [];
  return {
    world,
    herald,
    client,
    published,
    async publish(n) {
      for (let i = 0; i < n; i++) {
        const resource = resources[published.length % resources.length]!;
        published.push({ id: await publishAbout(herald.baseUrl, world.token, resource), resource });
      }
    },
    ids: () => published.map((p) => p.id).sort(),
    async create(body) {
      return (await unwrap(
        client.POST("/api/v1/webhooks", { body: { events: ["message.delivered"], ...body } as never }),
      )) as WebhookWithSecret;
    },
    close: () => world.close(),
  };
}

/**
 * The outage every file runs: `server` is killed, `during` more events are published (accepted while it
 * is down), two attempts of `endpoint` fail, the broker is started again; then every event published so
 * far, and nothing else, must be read by `tail`, and every record verifies. `name` is what the waits'
 * messages call the broker ("node", "server"). The order of each resource's events is the caller's to
 * check: it differs by broker (one queue's order, or grouping by key).
 */
export async function expectOutageSurvived(
  system: DestinationSystem,
  server: BrokerServer,
  endpoint: WebhookWithSecret,
  tail: { readonly records: readonly Consumed[] },
  during: number,
  name: string,
): Promise<void> {
  const consumed = () => new Set(tail.records.map(eventOf));
  await server.halt("kill");
  await system.publish(during);
  // The broker is down: attempts fail and are retried (a FIFO endpoint holds the later events back).
  await waitUntil(
    async () => (await allDeliveries(system.client, endpoint.id, "failed")).length >= 2,
    () => `two failed attempts while the ${name} is down`,
  );
  await server.resume();
  const total = system.published.length;
  await waitUntil(
    () => consumed().size === total,
    () => `${consumed().size} of ${total} consumed`,
  );
  expect([...consumed()].sort()).toEqual(system.ids());
  for (const r of tail.records) await verifyConsumed(r, endpoint);
}

/**
 * Every published event has exactly one succeeded attempt, after all its failed ones, and every failed
 * attempt failed as one of `codes`. `readAt`, when given, answers where a consumer read an event: its
 * success's receipt must be among them.
 */
export function expectNothingLost(
  deliveries: Delivery[],
  eventIds: readonly string[],
  codes: readonly string[],
  readAt?: (eventId: string) => unknown[],
): void {
  for (const d of deliveries.filter((x) => x.status === "failed")) expect(codes).toContain(d.error);
  for (const id of eventIds) {
    const ofEvent = deliveries.filter((d) => d.event_id === id);
    const succeeded = ofEvent.filter((d) => d.status === "succeeded");
    expect(succeeded, `the succeeded attempt of ${id}`).toHaveLength(1);
    for (const f of ofEvent.filter((d) => d.status === "failed"))
      expect(f.attempt).toBeLessThan(succeeded[0]!.attempt);
    if (readAt) expect(readAt(id)).toContainEqual(succeeded[0]!.receipt);
  }
}

/**
 * None of `credentials` in any answer about `webhookIds` (plus `answers` the test kept), nor anywhere in
 * Herald's whole output; the answers must name `shown` (the search can find what it looks for), and the
 * output must hold the requests about the last endpoint (what was searched is the whole log).
 */
export async function expectCredentialsHidden(
  system: DestinationSystem,
  webhookIds: string[],
  credentials: string[],
  shown: string,
  answers: string[] = [],
): Promise<void> {
  const { herald, world } = system;
  const all = [...(await everyAnswer(herald.baseUrl, world.token, webhookIds)), ...answers];
  expect(all.join("\n")).toContain(shown);
  expectNoCredential({ "the API's answers": all, "Herald's log": [herald.output()] }, credentials);
  expect(herald.output()).toContain(`/api/v1/webhooks/${webhookIds.at(-1)}/deliveries`);
}

/** Herald's log lines (JSON) whose msg is `msg`. */
export function logLines(herald: HeraldProcess, msg: string): Record<string, unknown>[] {
  return herald
    .output()
    .split("\n")
    .filter((l) => l.includes(`"msg":"${msg}"`))
    .map((l) => JSON.parse(l.slice(l.indexOf("{"))) as Record<string, unknown>);
}
