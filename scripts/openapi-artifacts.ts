import { readFileSync } from "node:fs";
import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript";
import { createAesGcmCipher } from "../src/adapters/crypto/aes-gcm-cipher.ts";
import { createCertificateReader } from "../src/adapters/crypto/client-certificates.ts";
import { createSubjectKeys } from "../src/adapters/crypto/subject-keys.ts";
import { createHttpApp } from "../src/adapters/http/app.ts";
import { openApiDocument } from "../src/adapters/http/openapi.ts";
import { createMemoryRepositories } from "../src/adapters/memory/repositories.ts";
import { systemClock, systemIds } from "../src/adapters/system.ts";
import { deliveryUseCases } from "../src/app/deliveries.ts";
import type { AppDeps } from "../src/app/deps.ts";
import { endpointTools } from "../src/app/endpoint-tools.ts";
import { endpointUseCases } from "../src/app/endpoints.ts";
import { erasureUseCases } from "../src/app/erasures.ts";
import { eventUseCases } from "../src/app/events.ts";
import { silentLogger } from "../src/app/logger.ts";
import { settingsUseCases } from "../src/app/settings.ts";
import { tokenUseCases } from "../src/app/tokens.ts";

export const OPENAPI_PATH = "openapi/openapi.json";
export const SCHEMA_TS_PATH = "clients/typescript/schema.d.ts";

/** The version written into the document: the package's. */
export function packageVersion(root: URL = new URL("../", import.meta.url)): string {
  return (JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as { version: string }).version;
}

/** The document as the running service builds it, from an app wired with throwaway in-memory deps. */
export async function buildOpenApiDocument(version = packageVersion()) {
  const repos = createMemoryRepositories();
  const deps: AppDeps = {
    repos,
    clock: systemClock,
    ids: systemIds,
    cipher: await createAesGcmCipher(new Uint8Array(32)),
    subjects: await createSubjectKeys(new Uint8Array(32)),
    certificates: createCertificateReader(),
    signal: { notify() {} },
    policy: { allowHttpUrls: false, allowPrivateNetworks: false },
  };
  const events = eventUseCases(deps, { eventsFiltered() {} });
  const app = createHttpApp({
    endpoints: endpointUseCases(deps),
    events,
    deliveries: deliveryUseCases(deps),
    tools: endpointTools(deps, events),
    tokens: tokenUseCases({ tokens: repos.tokens, clock: systemClock, ids: systemIds }),
    erasures: erasureUseCases(deps),
    settings: settingsUseCases({ settings: repos.settings, clock: systemClock, maxRetentionMs: 86_400_000 }),
    ping: () => repos.ping(),
    metrics: async () => "",
    logger: silentLogger,
    version,
  });
  return openApiDocument(app, version);
}

/** The two committed artifacts, byte for byte: openapi/openapi.json and clients/typescript/schema.d.ts. */
export async function renderOpenApiArtifacts(): Promise<{ documentJson: string; schemaTs: string }> {
  const document = await buildOpenApiDocument();
  const documentJson = `${JSON.stringify(document, null, 2)}\n`;
  // Defaults apply to what a caller may leave out, so they must not make request fields required.
  const ast = await openapiTS(JSON.parse(documentJson), { defaultNonNullable: false });
  const schemaTs = COMMENT_HEADER + astToString(ast);
  return { documentJson, schemaTs };
}
