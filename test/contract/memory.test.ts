import { createMemoryRepositories } from "../../src/adapters/memory/repositories.ts";
import { repositoryContract } from "./repository-contract.ts";

repositoryContract("memory", async () => {
  const repos = createMemoryRepositories();
  return { repos, cleanup: () => repos.close() };
});
