import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    mongoUri: string;
    postgresUrl: string;
  }
}
