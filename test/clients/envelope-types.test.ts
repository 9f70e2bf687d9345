import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { EventOf } from "../../clients/typescript/client.ts";
import type { HeraldEnvelope } from "../../clients/typescript/verify.ts";
import {
  GO_EVENTS_PATH,
  PYTHON_EVENTS_PATH,
  renderGo,
  renderPython,
  renderVerifyTs,
  VERIFY_TS_PATH,
} from "../../scripts/envelope-types.ts";
import { OPENAPI_PATH } from "../../scripts/openapi-artifacts.ts";
import { EVENT_TYPES } from "../../src/domain/event-catalog.ts";

const root = new URL("../../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");
// The committed document: test/adapters/http/openapi.test.ts fails when it differs from the code's.
const document: unknown = JSON.parse(read(OPENAPI_PATH));

describe("the verifier libraries' event types (run npm run openapi when these fail)", () => {
  it(`${VERIFY_TS_PATH}: its generated region is what the document gives`, () => {
    const current = read(VERIFY_TS_PATH);
    expect(current).toBe(renderVerifyTs(document, current));
  });

  it(`${PYTHON_EVENTS_PATH} is what the document gives`, () => {
    expect(read(PYTHON_EVENTS_PATH)).toBe(renderPython(document));
  });

  it(`${GO_EVENTS_PATH} is what the document gives`, () => {
    expect(read(GO_EVENTS_PATH)).toBe(renderGo(document));
  });

  it("every libraries' union names every type of the catalog", () => {
    for (const type of EVENT_TYPES) {
      expect(read(VERIFY_TS_PATH)).toContain(`  type: "${type}";`);
      expect(read(PYTHON_EVENTS_PATH)).toContain(`    type: Literal["${type}"]`);
      expect(read(GO_EVENTS_PATH)).toContain(`= "${type}"`);
    }
  });

  it("the verifier's envelope and the typed client's are the same types", () => {
    // Compile-time: each type's envelope is assignable both ways (tsc --noEmit checks this file).
    const same = <T extends EventOf<"domain.verified">>(
      e: T,
    ): Extract<HeraldEnvelope, { type: "domain.verified" }> => e;
    const back = (e: Extract<HeraldEnvelope, { type: "message.delivered" }>): EventOf<"message.delivered"> =>
      e;
    expect(typeof same).toBe("function");
    expect(typeof back).toBe("function");
  });
});
