import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHeraldClient, type EventType } from "../../clients/typescript/client.ts";
import type { HeraldProcess } from "../support/herald-process.ts";
import { behaviours, type Receiver, startReceiver } from "../support/receiver.ts";
import {
  allDeliveries,
  createEndpoint,
  type DeliveryWorld,
  deliveryWorld,
  E2E_SCALE,
  eventBody,
  eventIdOf,
  PROGRESS_TEST_TIMEOUT_MS,
  pool,
  publishRaw,
  waitForProgress,
} from "./delivery-support.ts";

// Issue 3, fairness (ADR 0003): an endpoint that never answers must not hold up a healthy one.
//
// What must be true, with no clock in it: the dead endpoint gets every event too and never answers, and
// its delivery timeout is longer than the whole test, so its requests stay in flight from before the
// healthy traffic starts until after it ends. HERALD_CONCURRENCY (15) is larger than the per-endpoint cap
// (10) but smaller than what the dead endpoint has due, so
//   - without the per-endpoint cap the dead endpoint's hanging requests would take every slot and the
//     healthy endpoint would get nothing (the wait below stops seeing progress and fails);
//   - every healthy delivery completes while all of the dead endpoint's requests are still hanging, so no
//     healthy delivery waited for one of the dead endpoint's timeouts: none has happened yet;
//   - the dead endpoint never has more than its cap in flight.
// How fast the healthy deliveries arrive is a benchmark's business (npm run bench), not this test's.
// HERALD_E2E_SCALE=13 gives the 1,000 events on the PostgreSQL store; the in-memory store runs them
// at that size always (its claim enforces the per-endpoint room with the same code, roomRule).
const CONCURRENCY = 15;
const ENDPOINT_CONCURRENCY = 10;
const TYPES: EventType[] = ["message.delivered", "message.bounced", "message.opened"];
const FIRST_TOKEN = /first API token \(shown once; keep it\): (hrld_\S+)/;

const CASES = [
  { store: "postgres", events: Math.round(75 * E2E_SCALE) },
  { store: "memory", events: 1_000 },
] as const;

describe.each(CASES)(
  "fairness on the $store store: a dead endpoint does not starve a healthy one (real process, HTTPS)",
  ({ store, events: EVENTS }) => {
    let world: DeliveryWorld;
    let herald: HeraldProcess | undefined;
    const deadSecrets: string[] = [];
    const healthySecrets: string[] = [];
    let dead: Receiver;
    let healthy: Receiver;

    beforeAll(async () => {
      world = await deliveryWorld("e2e_fair", {
        // Longer than the test: the dead endpoint's requests are still hanging when it ends.
        HERALD_DELIVERY_TIMEOUT: "1h",
        HERALD_CONCURRENCY: String(CONCURRENCY),
        HERALD_ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
      });
      dead = await startReceiver({ tls: world.tls, secrets: deadSecrets, behaviour: behaviours.hang() });
      healthy = await startReceiver({ tls: world.tls, secrets: healthySecrets });
    });

    afterAll(async () => {
      // Closing the dead receiver ends its hanging requests, so the process can stop gracefully.
      await Promise.allSettled([dead?.close(), healthy?.close()]);
      await world?.close();
    });

    it(
      `delivers ${EVENTS} events to the healthy endpoint while the other holds its cap of requests hanging`,
      async () => {
        let token = world.token;
        if (store === "memory") {
          herald = await world.start({ HERALD_STORE: "memory" });
          // An in-memory store starts empty, so the process prints its first token.
          token = FIRST_TOKEN.exec(herald.output())?.[1] ?? "";
          expect(token, "the in-memory Herald printed its first token").toMatch(/^hrld_/);
        } else {
          herald = await world.start();
        }
        const client = createHeraldClient({ baseUrl: herald.baseUrl, token });
        const d = await createEndpoint(client, dead.url, TYPES);
        deadSecrets.push(d.secret);

        // The dead endpoint first, alone: it is owed more than the whole process's concurrency, and takes
        // its cap of slots with requests that will hang for the rest of the test.
        const deadOwed = CONCURRENCY + 5;
        await pool(
          Array.from({ length: deadOwed }, () => eventBody("message.delivered")),
          4,
          async (body) => {
            expect((await publishRaw(herald!.baseUrl, token, body, randomUUID())).status).toBe(202);
          },
        );
        await waitForProgress(
          () => dead.requests.length,
          ENDPOINT_CONCURRENCY,
          (n) => `${n} of ${ENDPOINT_CONCURRENCY} requests reached the dead endpoint`,
        );

        // Then the healthy endpoint and its traffic; the dead endpoint is owed every one of these too.
        const h = await createEndpoint(client, healthy.url, TYPES);
        healthySecrets.push(h.secret);
        const ids: string[] = [];
        await pool(
          Array.from({ length: EVENTS }, (_, i) => eventBody(TYPES[i % TYPES.length]!)),
          8,
          async (body) => {
            const r = await publishRaw(herald!.baseUrl, token, body, randomUUID());
            expect(r.status).toBe(202);
            ids.push(r.id!);
          },
        );
        await waitForProgress(
          () => healthy.requests.length,
          EVENTS,
          (n) => `${n} of ${EVENTS} deliveries reached the healthy endpoint`,
        );

        const received = healthy.requests;
        expect(received.every((r) => r.verdict.ok)).toBe(true);
        expect(new Set(received.map(eventIdOf))).toEqual(new Set(ids));
        expect(received).toHaveLength(EVENTS);

        // All the while, the dead endpoint held exactly its cap: requests that never got an answer and,
        // with a timeout longer than the test, cannot have timed out; no healthy delivery waited for one.
        expect(dead.requests).toHaveLength(ENDPOINT_CONCURRENCY);
        expect(new Set(dead.requests.map(eventIdOf)).size).toBe(ENDPOINT_CONCURRENCY);
        const deadRecords = await allDeliveries(client, d.id);
        expect(deadRecords.length).toBe(deadOwed + EVENTS);
        expect(deadRecords.every((x) => x.status === "pending" && x.attempt === 1)).toBe(true);
        console.log(
          `fairness (${store}): ${EVENTS} events delivered to the healthy endpoint while the dead one held ` +
            `${dead.requests.length} hanging requests and was owed ${deadRecords.length}`,
        );
      },
      PROGRESS_TEST_TIMEOUT_MS,
    );
  },
);
