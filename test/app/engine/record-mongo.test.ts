import { afterEach, describe } from "vitest";
import { type FreshStore, freshStore } from "../../support/store.ts";
import { recordingCases } from "./record-cases.ts";

let store: FreshStore | null = null;
afterEach(async () => {
  await store?.cleanup();
  store = null;
});

// Issue 31 on the run's MongoDB-compatible server (FerretDB in CI), where it was seen (record.test.ts: the others).
const STORES = [
  [
    "MongoDB (FerretDB)",
    async () => {
      store = await freshStore("record_mongo", "mongo");
      return store.connect();
    },
  ],
] as const;

describe.each(STORES)("recording delivery results on %s (issue 31)", (_name, makeRepos) =>
  recordingCases(makeRepos),
);
