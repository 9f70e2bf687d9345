/** A registered route as hono lists it in `app.routes`. */
interface RouteEntry {
  method: string;
  path: string;
}

function matcher(path: string): RegExp {
  const source = path
    .split("/")
    .map((segment) => {
      if (segment.startsWith(":")) return "[^/]+";
      if (segment === "*") return ".*";
      return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return new RegExp(`^${source}$`);
}

/**
 * For a request that matched no route: the methods its path does take (sorted, HEAD wherever GET is,
 * as hono answers HEAD with the GET handler), or an empty list when no route has that path at all.
 * Built from the app's own routing table, so it cannot drift from the routes.
 */
export function allowedMethodsOf(routes: readonly RouteEntry[]): (path: string) => string[] {
  const table = routes
    .filter((r) => r.method !== "ALL")
    .map((r) => ({ method: r.method.toUpperCase(), pattern: matcher(r.path) }));
  return (path) => {
    const methods = new Set<string>();
    for (const r of table) {
      if (!r.pattern.test(path)) continue;
      methods.add(r.method);
      if (r.method === "GET") methods.add("HEAD");
    }
    return [...methods].sort();
  };
}
