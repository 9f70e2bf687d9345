// Preloaded by `npm start`, `npm run cli` and the image (`node --import`): Node keeps what it compiled of
// every module it loads, Herald's TypeScript after type stripping included, in node_modules/.cache, so a
// restart neither strips nor compiles again (on a busy 2-core machine, about 2 of a memory store's 2.5 s
// to /readyz; ADR 26). NODE_COMPILE_CACHE, when set, names another directory; a directory that cannot be
// written leaves the cache off, never the start.
import { enableCompileCache } from "node:module";
import { fileURLToPath } from "node:url";

if (!process.env.NODE_COMPILE_CACHE) {
  enableCompileCache?.(fileURLToPath(new URL("../../node_modules/.cache/herald-node/", import.meta.url)));
}
