import { createMemoryInsights, MemoryConsoleSessions } from "../../../src/adapters/memory/console.ts";
import { createMemoryRepositories } from "../../../src/adapters/memory/repositories.ts";
import { consoleContract } from "../../app/ports/console-contract.ts";
import { repositoryContract } from "../../app/ports/repository-contract.ts";

repositoryContract("memory", async () => {
  const repos = createMemoryRepositories();
  return { repos, cleanup: () => repos.close() };
});

consoleContract("memory", async () => {
  const repos = createMemoryRepositories();
  return {
    repos,
    sessions: new MemoryConsoleSessions(),
    insights: createMemoryInsights(() => repos.deliveries.rows.values()),
    cleanup: () => repos.close(),
  };
});
