import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { OPENAPI_PATH, renderOpenApiArtifacts, SCHEMA_TS_PATH } from "./openapi-artifacts.ts";

// Writes the OpenAPI document and the typed client's schema; test/adapters/http/openapi.test.ts fails
// when the committed files differ from what the code produces.
const root = new URL("../", import.meta.url);
const { documentJson, schemaTs } = await renderOpenApiArtifacts();
for (const [path, text] of [
  [OPENAPI_PATH, documentJson],
  [SCHEMA_TS_PATH, schemaTs],
] as const) {
  const file = new URL(path, root);
  mkdirSync(dirname(file.pathname), { recursive: true });
  writeFileSync(file, text);
  console.log(`wrote ${path}`);
}
