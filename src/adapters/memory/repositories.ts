import type { Repositories } from "../../app/ports/store.ts";
import { MemoryDeliveries } from "./deliveries.ts";
import { MemoryEndpoints } from "./endpoints.ts";
import { MemoryErasures, MemorySettings } from "./erasures.ts";
import { MemoryEvents } from "./events.ts";
import { MemoryIdempotency } from "./idempotency.ts";
import { MemoryShards } from "./shards.ts";
import { MemoryTokens } from "./tokens.ts";

/** In-memory repositories: the twin of the MongoDB adapter, for tests and the benchmark. */
export function createMemoryRepositories(): Repositories & {
  endpoints: MemoryEndpoints;
  events: MemoryEvents;
  deliveries: MemoryDeliveries;
  shards: MemoryShards;
} {
  let down = false;
  return {
    endpoints: new MemoryEndpoints(),
    events: new MemoryEvents(),
    deliveries: new MemoryDeliveries(),
    shards: new MemoryShards(),
    tokens: new MemoryTokens(),
    idempotency: new MemoryIdempotency(),
    erasures: new MemoryErasures(),
    settings: new MemorySettings(),
    async ping() {
      if (down) throw new Error("memory store closed");
    },
    async close() {
      down = true;
    },
  };
}
