import type { Collection, Db } from "mongodb";
import type {
  DeliveryDoc,
  EndpointDoc,
  EventDoc,
  IdempotencyDoc,
  ProcessDoc,
  ShardLeaseDoc,
  TokenDoc,
} from "./documents.ts";

export const COLLECTIONS = {
  endpoints: "endpoints",
  events: "events",
  deliveries: "deliveries",
  shardLeases: "shard_leases",
  processes: "processes",
  tokens: "tokens",
  idempotency: "idempotency_keys",
} as const;

export interface Collections {
  endpoints: Collection<EndpointDoc>;
  events: Collection<EventDoc>;
  deliveries: Collection<DeliveryDoc>;
  shardLeases: Collection<ShardLeaseDoc>;
  processes: Collection<ProcessDoc>;
  tokens: Collection<TokenDoc>;
  idempotency: Collection<IdempotencyDoc>;
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
  };
}
