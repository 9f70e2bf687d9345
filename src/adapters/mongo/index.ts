export { ensureIndexes } from "./indexes.ts";
export { freshPing, type StoreLiveness, type StoreLivenessOptions, storeLiveness } from "./liveness.ts";
export {
  connectMongo,
  createMongoRepositories,
  DEFAULT_CLIENT_OPTIONS,
  type MongoConnection,
} from "./repositories.ts";
