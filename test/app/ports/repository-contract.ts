import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Repositories } from "../../../src/app/ports/store.ts";
import { claimingContract } from "./claiming-contract.ts";
import { deliveryContract } from "./deliveries-contract.ts";
import { destinationContract } from "./destinations-contract.ts";
import { endpointContract } from "./endpoints-contract.ts";
import { erasureContract } from "./erasure-contract.ts";
import { eventContract } from "./events-contract.ts";
import { tokenContract } from "./tokens-contract.ts";

export interface ContractStore {
  repos: Repositories;
  cleanup(): Promise<void>;
}

/**
 * The behaviour every Repositories adapter owes the use cases. Each test gets a new, empty store, so
 * unscoped reads (due work, shard leases, due stats, retention, tokens) see only what the test wrote.
 */
export function repositoryContract(name: string, makeRepos: () => Promise<ContractStore>): void {
  describe(`repository contract: ${name}`, () => {
    let current: ContractStore | null = null;
    const store = (): Repositories => {
      if (!current) throw new Error("no store: the test runs outside beforeEach");
      return current.repos;
    };

    beforeEach(async () => {
      current = await makeRepos();
    });
    afterEach(async () => {
      await current?.cleanup();
      current = null;
    });

    it("answers ping while open", async () => {
      await expect(store().ping()).resolves.toBeUndefined();
    });

    endpointContract(store);
    destinationContract(store);
    eventContract(store);
    deliveryContract(store);
    claimingContract(store);
    tokenContract(store);
    erasureContract(store);
  });
}
