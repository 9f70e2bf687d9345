export { ensureIndexes } from "./indexes.ts";
export {
  connectMongo,
  createMongoRepositories,
  DEFAULT_CLIENT_OPTIONS,
  type MongoConnection,
} from "./repositories.ts";
