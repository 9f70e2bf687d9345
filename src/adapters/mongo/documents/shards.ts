/**
 * One generation of one shard's lease. Created by an insert and never by an update: the unique _id
 * makes "who holds generation n" atomic even on FerretDB v1. Only its owner updates it (renew, give back).
 */
export interface ShardLeaseDoc {
  /** `<shard>:<generation>` */
  _id: string;
  shard: number;
  generation: number;
  owner: string;
  /** The epoch once given back. */
  expires_at: Date;
}

/** A live Herald process, for rebalancing: each one renews its own. */
export interface ProcessDoc {
  _id: string;
  expires_at: Date;
}
