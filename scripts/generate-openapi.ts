import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import {
  GO_EVENTS_PATH,
  PYTHON_EVENTS_PATH,
  renderGo,
  renderPython,
  renderVerifyTs,
  VERIFY_TS_PATH,
} from "./envelope-types.ts";
import { OPENAPI_PATH, renderOpenApiArtifacts, SCHEMA_TS_PATH } from "./openapi-artifacts.ts";

// Writes the OpenAPI document, the typed client's schema and the verifier libraries' event types;
// test/adapters/http/openapi.test.ts and test/clients/envelope-types.test.ts fail when the committed
// files differ from what the code produces.
const root = new URL("../", import.meta.url);
const { documentJson, schemaTs } = await renderOpenApiArtifacts();
const document: unknown = JSON.parse(documentJson);
const verifyTs = readFileSync(new URL(VERIFY_TS_PATH, root), "utf8");
for (const [path, text] of [
  [OPENAPI_PATH, documentJson],
  [SCHEMA_TS_PATH, schemaTs],
  [VERIFY_TS_PATH, renderVerifyTs(document, verifyTs)],
  [PYTHON_EVENTS_PATH, renderPython(document)],
  [GO_EVENTS_PATH, renderGo(document)],
] as const) {
  const file = new URL(path, root);
  mkdirSync(dirname(file.pathname), { recursive: true });
  writeFileSync(file, text);
  console.log(`wrote ${path}`);
}
