// Renders the typed event envelope of the three verifier libraries (TypeScript, Python, Go) from the
// OpenAPI document's `webhooks` and their `XxxEvent`/`XxxData` components, so the libraries cannot
// drift from what Herald posts: `npm run openapi` writes them and test/clients/envelope-types.test.ts
// fails when the committed files differ.

export const VERIFY_TS_PATH = "clients/typescript/verify.ts";
export const PYTHON_EVENTS_PATH = "clients/python/herald_webhooks/events.py";
export const GO_EVENTS_PATH = "clients/go/heraldwebhooks/events.go";

/** The markers of the generated region of verify.ts, which stays one file with no imports. */
export const TS_BEGIN =
  "// <generated: event types, from openapi/openapi.json by `npm run openapi`; do not edit>";
export const TS_END = "// </generated: event types>";

interface Schema {
  $ref?: string;
  type?: string;
  enum?: (string | number)[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: Schema | boolean;
}

interface Document {
  webhooks: Record<
    string,
    { post: { requestBody: { content: { "application/json": { schema: Schema } } } } }
  >;
  components: { schemas: Record<string, Schema> };
}

/** A field of an object type, in a language-neutral form. */
type Kind =
  | { kind: "string"; values?: string[] }
  | { kind: "boolean" }
  | { kind: "number"; integer: boolean }
  | { kind: "map" }
  | { kind: "named"; name: string }
  | { kind: "list"; of: Kind };

interface Field {
  name: string;
  kind: Kind;
  required: boolean;
  description?: string | undefined;
}

interface ObjectType {
  name: string;
  description?: string | undefined;
  fields: Field[];
}

interface EventModel {
  type: string;
  description: string;
  envelope: ObjectType;
  data: ObjectType;
}

interface Model {
  events: EventModel[];
  /** Object types nested in data (a domain event's DNS records), each once. */
  nested: ObjectType[];
}

const refName = (ref: string) => ref.slice(ref.lastIndexOf("/") + 1);
const pascal = (snake: string) =>
  snake
    .split("_")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");

function readModel(doc: Document): Model {
  const nested = new Map<string, ObjectType>();
  const objectType = (name: string, schema: Schema, description = schema.description): ObjectType => ({
    name,
    description,
    fields: Object.entries(schema.properties ?? {}).map(([field, s]) => ({
      name: field,
      kind: kindOf(s, `${pascal(field).replace(/s$/, "")}`),
      required: (schema.required ?? []).includes(field),
      description: s.description,
    })),
  });
  const kindOf = (s: Schema, nestedName: string): Kind => {
    if (s.$ref) return { kind: "named", name: refName(s.$ref) };
    switch (s.type) {
      case "string":
        return s.enum ? { kind: "string", values: s.enum.map(String) } : { kind: "string" };
      case "boolean":
        return { kind: "boolean" };
      case "integer":
      case "number":
        return { kind: "number", integer: s.type === "integer" };
      case "array":
        return { kind: "list", of: kindOf(s.items ?? {}, nestedName) };
      case "object":
        if (!s.properties) return { kind: "map" };
        {
          const made = objectType(nestedName, s);
          const known = nested.get(nestedName);
          if (known && JSON.stringify(known) !== JSON.stringify(made)) {
            throw new Error(`two shapes of nested object ${nestedName}`);
          }
          nested.set(nestedName, made);
        }
        return { kind: "named", name: nestedName };
      default:
        throw new Error(`no type for schema ${JSON.stringify(s)}`);
    }
  };
  const events = Object.entries(doc.webhooks).map(([type, hook]) => {
    const envelopeName = refName(hook.post.requestBody.content["application/json"].schema.$ref ?? "");
    const envelope = doc.components.schemas[envelopeName];
    if (!envelope?.properties?.data?.$ref) throw new Error(`webhook ${type} posts no envelope component`);
    const dataName = refName(envelope.properties.data.$ref);
    const data = doc.components.schemas[dataName]!;
    return {
      type,
      description: envelope.properties.type?.description ?? "",
      envelope: objectType(envelopeName, envelope),
      data: objectType(dataName, data),
    };
  });
  return { events, nested: [...nested.values()] };
}

// ---------------------------------------------------------------------------------------- TypeScript

function tsKind(k: Kind): string {
  switch (k.kind) {
    case "string":
      return k.values ? k.values.map((v) => JSON.stringify(v)).join(" | ") : "string";
    case "boolean":
      return "boolean";
    case "number":
      return "number";
    case "map":
      return "Record<string, unknown>";
    case "named":
      return k.name;
    case "list":
      return `${tsKind(k.of)}[]`;
  }
}

/** biome.json's lineWidth. */
const TS_LINE_WIDTH = 110;

function tsObject(o: ObjectType, doc: string): string {
  const fields = o.fields.map((f) => {
    const line = `  ${f.name}${f.required ? "" : "?"}: ${tsKind(f.kind)};`;
    // As Biome prints it: a union too long for the line goes one member a line.
    if (line.length <= TS_LINE_WIDTH || f.kind.kind !== "string" || !f.kind.values) return line;
    const members = f.kind.values.map((v) => `    | ${JSON.stringify(v)}`).join("\n");
    return `  ${f.name}${f.required ? "" : "?"}:\n${members};`;
  });
  // Type aliases, not interfaces: they stay assignable to Envelope's Record<string, unknown> data.
  return `/** ${doc} */\nexport type ${o.name} = {\n${fields.join("\n")}\n};`;
}

function renderTs(m: Model): string {
  const parts = [
    TS_BEGIN,
    ...m.nested.map((o) => tsObject(o, `An object nested in event data (${o.name}).`)),
    ...m.events.flatMap((e) => [
      tsObject(e.data, `The data of ${e.type}: ${e.description}`),
      tsObject(e.envelope, `The envelope of ${e.type}.`),
    ]),
    "/** Every envelope Herald posts, discriminated by `type`: narrow on it to get the type's `data`. */",
    `export type HeraldEnvelope =\n${m.events.map((e) => `  | ${e.envelope.name}`).join("\n")};`,
    "/** The event types of the catalog. */",
    'export type HeraldEventType = HeraldEnvelope["type"];',
    TS_END,
  ];
  return parts.join("\n");
}

/** verify.ts with its generated region replaced. */
export function renderVerifyTs(doc: unknown, current: string): string {
  const begin = current.indexOf(TS_BEGIN);
  const end = current.indexOf(TS_END);
  if (begin < 0 || end < begin) throw new Error(`${VERIFY_TS_PATH} has no generated region`);
  return current.slice(0, begin) + renderTs(readModel(doc as Document)) + current.slice(end + TS_END.length);
}

// -------------------------------------------------------------------------------------------- Python

function pyKind(k: Kind): string {
  switch (k.kind) {
    case "string":
      return k.values ? `Literal[${k.values.map((v) => JSON.stringify(v)).join(", ")}]` : "str";
    case "boolean":
      return "bool";
    case "number":
      return k.integer ? "int" : "float";
    case "map":
      return "Dict[str, Any]";
    case "named":
      return k.name;
    case "list":
      return `List[${pyKind(k.of)}]`;
  }
}

function pyObject(o: ObjectType, doc: string): string {
  const line = (f: Field) => `    ${f.name}: ${pyKind(f.kind)}`;
  const required = o.fields.filter((f) => f.required);
  const optional = o.fields.filter((f) => !f.required);
  // Python 3.8 has no NotRequired: required keys in a base class, optional ones in a total=False child.
  if (optional.length === 0) {
    return `class ${o.name}(TypedDict):\n    """${doc}"""\n\n${required.map(line).join("\n")}\n`;
  }
  return [
    `class _${o.name}Required(TypedDict):`,
    ...required.map(line),
    "",
    "",
    `class ${o.name}(_${o.name}Required, total=False):`,
    `    """${doc}"""`,
    "",
    ...optional.map(line),
    "",
  ].join("\n");
}

export function renderPython(doc: unknown): string {
  const m = readModel(doc as Document);
  const names = [
    ...m.nested.map((o) => o.name),
    ...m.events.flatMap((e) => [e.data.name, e.envelope.name]),
    "HeraldEnvelope",
  ];
  const classes = [
    ...m.nested.map((o) => pyObject(o, `An object nested in event data (${o.name}).`)),
    ...m.events.flatMap((e) => [
      pyObject(e.data, `The data of ${e.type}: ${e.description}`),
      pyObject(e.envelope, `The envelope of ${e.type}.`),
    ]),
  ];
  return `"""The envelopes Herald posts, one TypedDict per event type.

Generated from openapi/openapi.json by \`npm run openapi\`; do not edit. Narrow a verified envelope on
its \`\`type\`\` to get that type's \`\`data\`\`.
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, TypedDict, Union

__all__ = [
${names.map((n) => `    "${n}",`).join("\n")}
]


${classes.join("\n\n")}

#: Every envelope Herald posts, discriminated by \`\`type\`\`.
HeraldEnvelope = Union[
${m.events.map((e) => `    ${e.envelope.name},`).join("\n")}
]
`;
}

// ------------------------------------------------------------------------------------------------ Go

const goName = (snake: string) =>
  snake
    .split("_")
    .map((w) => (w === "id" || w === "dns" ? w.toUpperCase() : w.charAt(0).toUpperCase() + w.slice(1)))
    .join("");

function goKind(k: Kind, required: boolean): string {
  switch (k.kind) {
    case "string":
      return required ? "string" : "*string";
    case "boolean":
      return required ? "bool" : "*bool";
    case "number":
      return `${required ? "" : "*"}${k.integer ? "int64" : "float64"}`;
    case "map":
      return "map[string]any";
    case "named":
      return required ? k.name : `*${k.name}`;
    case "list":
      return `[]${goKind(k.of, true)}`;
  }
}

function goStruct(o: ObjectType, doc: string): string {
  const cells = o.fields.map((f) => ({
    name: goName(f.name),
    type: goKind(f.kind, f.required),
    tag: `\`json:"${f.name}${f.required ? "" : ",omitempty"}"\``,
    comment: f.kind.kind === "string" && f.kind.values ? `// ${f.kind.values.join(", ")}` : "",
  }));
  // gofmt's alignment: names and types over the whole struct, comments over each run of lines that have one.
  const nameWidth = Math.max(...cells.map((c) => c.name.length));
  const typeWidth = Math.max(...cells.map((c) => c.type.length));
  const tagWidth = cells.map((_, i) => {
    if (!cells[i]!.comment) return 0;
    let from = i;
    while (from > 0 && cells[from - 1]!.comment) from--;
    let to = i;
    while (to < cells.length - 1 && cells[to + 1]!.comment) to++;
    return Math.max(...cells.slice(from, to + 1).map((c) => c.tag.length));
  });
  const lines = cells.map((c, i) => {
    const head = `\t${c.name.padEnd(nameWidth)} ${c.type.padEnd(typeWidth)} `;
    return c.comment ? `${head}${c.tag.padEnd(tagWidth[i]!)} ${c.comment}` : `${head}${c.tag}`;
  });
  return `// ${o.name} is ${doc}\ntype ${o.name} struct {\n${lines.join("\n")}\n}`;
}

export function renderGo(doc: unknown): string {
  const m = readModel(doc as Document);
  const constName = (type: string) => `Event${goName(type.replace(".", "_"))}`;
  const width = Math.max(...m.events.map((e) => constName(e.type).length));
  return `// Code generated from openapi/openapi.json by \`npm run openapi\`. DO NOT EDIT.

package heraldwebhooks

import (
\t"encoding/json"
\t"fmt"
)

// The event types of the catalog: the values of Envelope.Type.
const (
${m.events.map((e) => `\t${constName(e.type).padEnd(width)} = ${JSON.stringify(e.type)}`).join("\n")}
)

${[
  ...m.nested.map((o) => goStruct(o, "an object nested in event data.")),
  ...m.events.map((e) => goStruct(e.data, `the data of ${e.type}: ${e.description}`)),
].join("\n\n")}

// DecodeData decodes Data into the struct of the envelope's Type: a *MessageDeliveredData for
// message.delivered, and so on for every type of the catalog. A type this library does not know is
// an error; Data stays available to decode by hand.
func (e *Envelope) DecodeData() (any, error) {
\tswitch e.Type {
${m.events
  .map((e) => `\tcase ${constName(e.type)}:\n\t\treturn decodeData[${e.data.name}](e.Data)`)
  .join("\n")}
\t}
\treturn nil, fmt.Errorf("heraldwebhooks: unknown event type %q", e.Type)
}

func decodeData[T any](raw json.RawMessage) (any, error) {
\tvar data T
\tif err := json.Unmarshal(raw, &data); err != nil {
\t\treturn nil, fmt.Errorf("heraldwebhooks: data: %w", err)
\t}
\treturn &data, nil
}
`;
}
