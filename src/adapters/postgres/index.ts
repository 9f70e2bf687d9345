export { DEFAULT_POSTGRES_OPTIONS, openPostgres } from "./connection.ts";
export { migrate, shippedMigrations } from "./migrate.ts";
export {
  connectPostgres,
  createPostgresRepositories,
  type PostgresConnection,
} from "./repositories.ts";
