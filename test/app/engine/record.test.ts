import { afterEach, describe } from "vitest";
import { createMemoryRepositories } from "../../../src/adapters/memory/repositories.ts";
import { type FreshStore, freshStore } from "../../support/store.ts";
import { recordingCases } from "./record-cases.ts";

let store: FreshStore | null = null;
afterEach(async () => {
  await store?.cleanup();
  store = null;
});

// Issue 31 on memory and PostgreSQL; MongoDB (FerretDB) in record-mongo.test.ts, with the run's MongoDB.
const STORES = [
  ["memory", async () => createMemoryRepositories()],
  [
    "PostgreSQL",
    async () => {
      store = await freshStore("record_pg", "postgres");
      return store.connect();
    },
  ],
] as const;

describe.each(STORES)("recording delivery results on %s (issue 31)", (_name, makeRepos) =>
  recordingCases(makeRepos),
);
