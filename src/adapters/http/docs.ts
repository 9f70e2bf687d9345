import { readFile } from "node:fs/promises";
import { Scalar } from "@scalar/hono-api-reference";
import type { AppEnv, HttpApp } from "./env.ts";

// The installed @scalar/api-reference (pinned to an exact version in package.json). Its browser bundle
// is not in the package's exports, so it is found beside the package's entry point.
const PACKAGE = "@scalar/api-reference";

/** Where the installed package lives, as a file: URL ending in a slash. */
function packageRoot(): URL {
  const entry = import.meta.resolve(PACKAGE); // .../@scalar/api-reference/dist/index.js
  return new URL("../", entry);
}

interface Bundle {
  version: string;
  script: Uint8Array;
}

let bundle: Promise<Bundle> | undefined;

/** The reference's browser bundle and its version, read once from node_modules. */
export function scalarBundle(): Promise<Bundle> {
  bundle ??= (async () => {
    const root = packageRoot();
    const pkg = JSON.parse(await readFile(new URL("package.json", root), "utf8")) as { version: string };
    const script = new Uint8Array(await readFile(new URL("dist/browser/standalone.js", root)));
    return { version: pkg.version, script };
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
