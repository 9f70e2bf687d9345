import type { Collection, Db } from "mongodb";
import type { DeliveryDoc } from "./documents/deliveries.ts";
import type { EndpointDoc } from "./documents/endpoints.ts";
import type { ErasureDoc } from "./documents/erasures.ts";
import type { EventDoc } from "./documents/events.ts";
import type { IdempotencyDoc } from "./documents/idempotency.ts";
import type { ProjectSettingsDoc } from "./documents/settings.ts";
import type { ProcessDoc, ShardLeaseDoc } from "./documents/shards.ts";
import type { TokenDoc } from "./documents/tokens.ts";

export const COLLECTIONS = {
  endpoints: "endpoints",
  events: "events",
  deliveries: "deliveries",
  shardLeases: "shard_leases",
  processes: "processes",
  tokens: "tokens",
  idempotency: "idempotency_keys",
  erasures: "erasures",
  projectSettings: "project_settings",
} as const;

export interface Collections {
  endpoints: Collection<EndpointDoc>;
  events: Collection<EventDoc>;
  deliveries: Collection<DeliveryDoc>;
  shardLeases: Collection<ShardLeaseDoc>;
  processes: Collection<ProcessDoc>;
  tokens: Collection<TokenDoc>;
  idempotency: Collection<IdempotencyDoc>;
  erasures: Collection<ErasureDoc>;
  projectSettings: Collection<ProjectSettingsDoc>;
}

/** The typed collections of a Herald database. */
export function collectionsOf(db: Db): Collections {
  return {
    endpoints: db.collection<EndpointDoc>(COLLECTIONS.endpoints),
    events: db.collection<EventDoc>(COLLECTIONS.events),
    deliveries: db.collection<DeliveryDoc>(COLLECTIONS.deliveries),
    shardLeases: db.collection<ShardLeaseDoc>(COLLECTIONS.shardLeases),
    processes: db.collection<ProcessDoc>(COLLECTIONS.processes),
    tokens: db.collection<TokenDoc>(COLLECTIONS.tokens),
    idempotency: db.collection<IdempotencyDoc>(COLLECTIONS.idempotency),
    erasures: db.collection<ErasureDoc>(COLLECTIONS.erasures),
    projectSettings: db.collection<ProjectSettingsDoc>(COLLECTIONS.projectSettings),
  };
}
