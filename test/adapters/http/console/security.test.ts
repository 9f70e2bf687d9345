import { describe, expect, it } from "vitest";
import { contentSecurityPolicy } from "../../../../src/adapters/http/console/security.ts";
import { ConfigError, parseConfig } from "../../../../src/app/config.ts";

describe("HERALD_PORTAL_FRAME_ANCESTORS", () => {
  it("defaults to none, and takes origins separated by spaces or commas", () => {
    expect(parseConfig({}).portalFrameAncestors).toEqual([]);
    expect(
      parseConfig({ HERALD_PORTAL_FRAME_ANCESTORS: "https://app.example.com, http://localhost:3000 'self'" })
        .portalFrameAncestors,
    ).toEqual(["https://app.example.com", "http://localhost:3000", "'self'"]);
  });

  it("stops the start with one line naming the variable for anything that is not an origin", () => {
    for (const bad of ["app.example.com", "https://app.example.com/path", "*", "'unsafe-inline'"]) {
      expect(() => parseConfig({ HERALD_PORTAL_FRAME_ANCESTORS: bad }), bad).toThrow(ConfigError);
      expect(() => parseConfig({ HERALD_PORTAL_FRAME_ANCESTORS: bad })).toThrow(
        /HERALD_PORTAL_FRAME_ANCESTORS/,
      );
    }
  });

  it("lets only portal pages be framed, and only by those origins", () => {
    const origins = ["https://app.example.com"];
    expect(contentSecurityPolicy("console", origins)).toContain("frame-ancestors 'none'");
    expect(contentSecurityPolicy("portal", origins)).toContain("frame-ancestors https://app.example.com");
    expect(contentSecurityPolicy("portal", [])).toContain("frame-ancestors 'none'");
  });
});
