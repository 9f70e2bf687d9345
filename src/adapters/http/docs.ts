import { readFile } from "node:fs/promises";
import { Scalar } from "@scalar/hono-api-reference";
import type { AppEnv, HttpApp } from "./env.ts";

// Scalar's browser bundle, from @scalar/api-reference at the exact version that
// assets/api-reference/package.json pins. That package is installed apart from Herald's own dependencies,
// by the root's postinstall under the Node that runs Herald (ADR 23): Herald reads one file of it and
// never imports it.
const PACKAGE_ROOT = new URL(
  "../../../assets/api-reference/node_modules/@scalar/api-reference/",
  import.meta.url,
);

interface Bundle {
  version: string;
  script: Uint8Array;
}

let bundle: Promise<Bundle> | undefined;

/** The reference's browser bundle and its version, read once from assets/api-reference. */
export function scalarBundle(): Promise<Bundle> {
  bundle ??= (async () => {
    try {
      const pkg = JSON.parse(await readFile(new URL("package.json", PACKAGE_ROOT), "utf8")) as {
        version: string;
      };
      const script = new Uint8Array(await readFile(new URL("dist/browser/standalone.js", PACKAGE_ROOT)));
      return { version: pkg.version, script };
    } catch (cause) {
      throw new Error("the API reference's bundle is not installed (assets/api-reference): run npm install", {
        cause,
      });
    }
  })();
  bundle.catch(() => {
    bundle = undefined;
  });
  return bundle;
}

/** The path the bundle is served at; the version in it lets browsers cache it for good. */
export const docsScriptPath = (version: string) => `/docs/api-reference-${version}.js`;

/**
 * GET /docs: the Scalar reference of /openapi.json, with its script served by Herald itself from the
 * installed package (no CDN, so it works offline and cannot change under us) and no web fonts.
 */
export function registerDocs(app: HttpApp): void {
  app.get(
    "/docs",
    Scalar<AppEnv>(async () => ({
      url: "/openapi.json",
      pageTitle: "Herald API reference",
      cdn: docsScriptPath((await scalarBundle()).version),
      withDefaultFonts: false,
      // Scalar's hosted extras (AI agent, MCP generation, developer toolbar) need its servers; a
      // self-hosted reference that must work offline leaves them out. Newer than the adapter's types.
      ...({ agent: { disabled: true }, mcp: { disabled: true }, showDeveloperTools: "never" } as object),
    })),
  );
  app.get("/docs/:file{api-reference-[^/]+\\.js}", async (c) => {
    const { version, script } = await scalarBundle();
    if (c.req.path !== docsScriptPath(version)) return c.notFound();
    return c.body(script as Uint8Array<ArrayBuffer>, 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": "public, max-age=31536000, immutable",
    });
  });
}
