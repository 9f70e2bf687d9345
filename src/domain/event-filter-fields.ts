import { EVENT_DATA_SCHEMAS, type EventType } from "./event-catalog.ts";

// Which `data.*` paths exist, read from the catalog's zod schemas, so a filter naming a field that no
// subscribed type has (a typo that would silently drop every event) is refused when it is set.

interface SchemaDef {
  type: string;
  shape?: Record<string, unknown>;
  innerType?: unknown;
  element?: unknown;
}

const defOf = (schema: unknown): SchemaDef => (schema as { def: SchemaDef }).def;

function unwrapped(schema: unknown): SchemaDef {
  let def = defOf(schema);
  while ((def.type === "optional" || def.type === "nullable" || def.type === "default") && def.innerType) {
    def = defOf(def.innerType);
  }
  return def;
}

const isIndex = (s: string) => /^\d+$/.test(s);

/** Whether the path exists below this schema. Arrays are looked through, as a filter's paths are. */
function pathExists(schema: unknown, segments: readonly string[]): boolean {
  const def = unwrapped(schema);
  if (segments.length === 0) return true;
  const [first, ...rest] = segments as [string, ...string[]];
  switch (def.type) {
    case "object":
      return def.shape !== undefined && Object.hasOwn(def.shape, first) && pathExists(def.shape[first], rest);
    case "array":
      return pathExists(def.element, isIndex(first) ? rest : segments);
    case "record":
    case "unknown":
    case "any":
      // Free-form JSON (a message's metadata): any path may exist.
      return true;
    default:
      return false;
  }
}

/** The top-level data fields of these event types, in catalog order, without repeats. */
export function dataFieldsOf(types: readonly EventType[]): string[] {
  const fields = new Set<string>();
  for (const t of types) {
    const def = unwrapped(EVENT_DATA_SCHEMAS[t]);
    for (const f of Object.keys(def.shape ?? {})) fields.add(f);
  }
  return [...fields];
}

/**
 * Why `data.<segments>` names nothing in the data of any of these event types, or null when it names
 * a field of at least one of them.
 */
export function dataPathProblem(types: readonly EventType[], segments: readonly string[]): string | null {
  if (segments.length === 0 || types.some((t) => pathExists(EVENT_DATA_SCHEMAS[t], segments))) return null;
  const fields = dataFieldsOf(types);
  if (!fields.includes(segments[0]!)) {
    return `is not a data field of the endpoint's event types; their data has ${fields.join(", ")}`;
  }
  return `is not a path in the data of the endpoint's event types: data.${segments[0]} has no such field`;
}
