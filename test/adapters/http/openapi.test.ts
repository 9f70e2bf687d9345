import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OPENAPI_PATH, renderOpenApiArtifacts, SCHEMA_TS_PATH } from "../../../scripts/openapi-artifacts.ts";
import { componentStem } from "../../../src/adapters/http/routes/events/payloads.ts";
import {
  EVENT_TYPES,
  isOperationalType,
  MESSAGE_LIFECYCLE_TYPES,
  PUBLISHED_EVENT_TYPES,
  resourceIdField,
} from "../../../src/domain/event-catalog.ts";

const root = new URL("../../../", import.meta.url);
const committed = (path: string) => {
  try {
    return readFileSync(new URL(path, root), "utf8");
  } catch {
    return "";
  }
};

interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string }[];
  requestBody?: { required?: boolean; content: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, unknown> }>;
}
interface Document {
  openapi: string;
  info: { title: string; version: string };
  components: {
    securitySchemes: Record<string, { type: string; scheme: string }>;
    schemas: Record<string, unknown>;
  };
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
}

interface Union {
  oneOf: { $ref: string }[];
  discriminator: { propertyName: string; mapping: Record<string, string> };
}
interface ObjectSchema {
  properties: Record<string, { $ref?: string; enum?: string[] }>;
  required: string[];
  additionalProperties?: boolean;
}

const artifacts = renderOpenApiArtifacts();

describe("the OpenAPI document", () => {
  it(`matches the committed ${OPENAPI_PATH} (run npm run openapi)`, async () => {
    const { documentJson } = await artifacts;
    expect(committed(OPENAPI_PATH), "openapi/openapi.json is stale: run npm run openapi").toBe(documentJson);
  });

  it(`matches the committed ${SCHEMA_TS_PATH} (run npm run openapi)`, async () => {
    const { schemaTs } = await artifacts;
    expect(committed(SCHEMA_TS_PATH), "clients/typescript/schema.d.ts is stale: run npm run openapi").toBe(
      schemaTs,
    );
  });

  it("declares the bearer scheme and, for every /api/v1 operation, its security and error answers", async () => {
    const doc = JSON.parse((await artifacts).documentJson) as Document;
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.title).toBe("Herald");
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });

    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ path, method, op })),
    );
    const api = operations.filter((o) => o.path.startsWith("/api/v1/"));
    expect(api.map((o) => `${o.method.toUpperCase()} ${o.path}`).sort()).toEqual([
      "DELETE /api/v1/portal-sessions/{id}",
      "DELETE /api/v1/webhooks/{id}",
      "GET /api/v1/erasures",
      "GET /api/v1/erasures/{id}",
      "GET /api/v1/events/{id}",
      "GET /api/v1/listen-sessions/{id}/stream",
      "GET /api/v1/settings",
      "GET /api/v1/webhooks",
      "GET /api/v1/webhooks/deliveries/{delivery_id}",
      "GET /api/v1/webhooks/{id}",
      "GET /api/v1/webhooks/{id}/deliveries",
      "PATCH /api/v1/settings",
      "PATCH /api/v1/webhooks/{id}",
      "POST /api/v1/erasures",
      "POST /api/v1/events",
      "POST /api/v1/events/batch",
      "POST /api/v1/listen-sessions",
      "POST /api/v1/listen-sessions/{id}/answers",
      "POST /api/v1/portal-sessions",
      "POST /api/v1/webhooks",
      "POST /api/v1/webhooks/deliveries/{delivery_id}/retry",
      "POST /api/v1/webhooks/{id}/enable",
      "POST /api/v1/webhooks/{id}/filter-test",
      "POST /api/v1/webhooks/{id}/recover",
      "POST /api/v1/webhooks/{id}/rotate",
      "POST /api/v1/webhooks/{id}/test",
    ]);

    for (const { path, method, op } of api) {
      const where = `${method.toUpperCase()} ${path}`;
      expect(op.operationId, where).toMatch(/^[a-z][A-Za-z]+$/);
      expect(op.security, where).toEqual([{ bearerAuth: [] }]);
      const statuses = Object.keys(op.responses);
      const errors = statuses.filter((s) => Number(s) >= 400);
      expect(errors, where).toEqual(expect.arrayContaining(["401", "500", "503"]));
      if (path.includes("{")) expect(errors, where).toContain("404");
      if (op.requestBody) expect(errors, where).toEqual(expect.arrayContaining(["400", "413", "415", "422"]));
      if (op.parameters?.some((p) => p.in === "query" || p.in === "header"))
        expect(errors, where).toContain("422");
      for (const s of errors) {
        expect(Object.keys(op.responses[s]!.content ?? {}), `${where} ${s}`).toEqual([
          "application/problem+json",
        ]);
      }
      const success = statuses.filter((s) => Number(s) < 300);
      expect(success, where).toHaveLength(1);
    }
    const create = doc.paths["/api/v1/webhooks"]!.post!;
    expect(create.requestBody?.required).toBe(true);
    expect(doc.paths["/api/v1/events"]!.post!.requestBody?.required).toBe(true);
    expect(doc.paths["/api/v1/webhooks/{id}"]!.patch!.requestBody?.required).toBe(true);
    expect(doc.paths["/api/v1/webhooks/{id}/filter-test"]!.post!.requestBody?.required).toBe(true);
    expect(doc.paths["/api/v1/erasures"]!.post!.requestBody?.required).toBe(true);
    expect(doc.paths["/api/v1/settings"]!.patch!.requestBody?.required).toBe(true);

    for (const path of ["/healthz", "/readyz", "/metrics"]) {
      expect(doc.paths[path]?.get, path).toBeDefined();
      // Open, and saying so: Redocly's recommended rules refuse an operation that leaves security unsaid.
      expect(doc.paths[path]!.get!.security, path).toEqual([]);
    }
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        "Webhook",
        "WebhookWithSecret",
        "Delivery",
        "Event",
        "Erasure",
        "Settings",
        "Problem",
        "ValidationProblem",
        "EventFilter",
        "FilterTestRequest",
        "FilterTestResult",
      ]),
    );
  });

  it("declares each event type's data: unions discriminated by type for publishing, batches, answers and receivers", async () => {
    const doc = JSON.parse((await artifacts).documentJson) as Document;
    const schemas = doc.components.schemas as Record<string, unknown>;
    const ref = (name: string) => `#/components/schemas/${name}`;
    const variants = {
      PublishEventRequest: "Publish",
      PublishBatchEvent: "BatchItem",
      Event: "Event",
      PublishedEvent: "Published",
    };
    for (const [union, suffix] of Object.entries(variants)) {
      const u = schemas[union] as Union;
      expect(u.discriminator.propertyName, union).toBe("type");
      // Operational types are delivered (Event) but never published (ADR 20).
      const types = union === "Event" ? EVENT_TYPES : PUBLISHED_EVENT_TYPES;
      expect(u.discriminator.mapping, union).toEqual(
        Object.fromEntries(types.map((t) => [t, ref(`${componentStem(t)}${suffix}`)])),
      );
      expect(u.oneOf.map((o) => o.$ref)).toEqual(Object.values(u.discriminator.mapping));
      for (const t of types) {
        const v = schemas[`${componentStem(t)}${suffix}`] as ObjectSchema;
        expect(v.properties.type!.enum, `${union} ${t}`).toEqual([t]);
        expect(v.properties.data!.$ref, `${union} ${t}`).toBe(ref(`${componentStem(t)}Data`));
        // Requests refuse fields they do not define; envelopes may grow, so receivers must ignore new fields.
        expect(v.additionalProperties, `${union} ${t}`).toBe(
          suffix === "Publish" || suffix === "BatchItem" ? false : undefined,
        );
      }
    }
    for (const t of EVENT_TYPES) {
      const data = schemas[`${componentStem(t)}Data`] as ObjectSchema;
      const subject = resourceIdField(t);
      expect(data.required, t).toContain(subject);
      expect(data.additionalProperties, t).toBe(false);
      if (isOperationalType(t)) continue;
      if (!t.startsWith("message.") || MESSAGE_LIFECYCLE_TYPES.includes(t)) {
        expect(data.properties.status!.enum, t).toEqual([t.slice(t.indexOf(".") + 1)]);
      }
    }
    const body = (op: Operation | undefined) =>
      (op?.requestBody?.content["application/json"] as { schema: { $ref: string } } | undefined)?.schema.$ref;
    expect(body(doc.paths["/api/v1/events"]!.post)).toBe(ref("PublishEventRequest"));
    // Receivers: one webhook per event type, whose body is that type's envelope.
    expect(Object.keys(doc.webhooks)).toEqual([...EVENT_TYPES]);
    for (const t of EVENT_TYPES) {
      expect(body(doc.webhooks[t]!.post), t).toBe(ref(`${componentStem(t)}Event`));
      expect(doc.webhooks[t]!.post!.security, t).toEqual([]);
    }
  });
});
