// The row mappers live in rows/, one file per port. This file only keeps the imports of deliveries.ts and
// shards.ts working while they are changed on other branches; repoint them to rows/ and delete it.
export { ints, OID, texts, times } from "./rows/arrays.ts";
export { type DeliveryRow, deliveryColumns, deliveryFromRow, deliveryRecords } from "./rows/deliveries.ts";
export { leaseFromRow, type ShardLeaseRow } from "./rows/shards.ts";
