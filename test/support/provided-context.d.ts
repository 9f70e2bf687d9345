import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's PostgreSQL server (its `postgres` database); "": none, each file starts an embedded one. */
    postgresUrl: string;
    /** The run's MongoDB server; "" when none could be had (see `mongoUnavailable`). */
    mongoUri: string;
    /** Why there is no MongoDB, in one line saying what to provide; "" when there is one. */
    mongoUnavailable: string;
    /** A directory for the run's throwaway files, removed when the run ends (global-setup.ts's runScratch). */
    scratchDir: string;
  }
}
