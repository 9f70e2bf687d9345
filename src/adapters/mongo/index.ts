export { DEFAULT_CLIENT_OPTIONS } from "./connection.ts";
export { ensureIndexes } from "./indexes.ts";
export { freshPing, type StoreLiveness, type StoreLivenessOptions, storeLiveness } from "./liveness.ts";
export {
  connectMongo,
  createMongoRepositories,
  type MongoConnection,
} from "./repositories.ts";
