import type { Collection, Db } from "mongodb";
import type { DeliveryDoc, EndpointDoc, EventDoc, IdempotencyDoc, LeaseDoc, TokenDoc } from "./documents.ts";

export const COLLECTIONS = {
  endpoints: "endpoints",
  events: "events",
  deliveries: "deliveries",
  leases: "delivery_leases",
  tokens: "tokens",
  idempotency: "idempotency_keys",
} as const;

export interface Collections {
  endpoints: Collection<EndpointDoc>;
  events: Collection<EventDoc>;
  deliveries: Collection<DeliveryDoc>;
  leases: Collection<LeaseDoc>;
  tokens: Collection<TokenDoc>;
  idempotency: Collection<IdempotencyDoc>;
}

/** The typed collections of a Herald database. */
export function collectionsOf(db: Db): Collections {
  return {
    endpoints: db.collection<EndpointDoc>(COLLECTIONS.endpoints),
    events: db.collection<EventDoc>(COLLECTIONS.events),
    deliveries: db.collection<DeliveryDoc>(COLLECTIONS.deliveries),
    leases: db.collection<LeaseDoc>(COLLECTIONS.leases),
    tokens: db.collection<TokenDoc>(COLLECTIONS.tokens),
    idempotency: db.collection<IdempotencyDoc>(COLLECTIONS.idempotency),
  };
}
