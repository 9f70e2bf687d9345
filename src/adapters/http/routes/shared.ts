import { z } from "@hono/zod-openapi";
import { EVENT_TYPES } from "../../../domain/event-catalog.ts";
import { UUID_PATTERN } from "../../../domain/ids.ts";

/** A whole number from min to max, with one message for every way to miss it. */
export const intRange = (min: number, max: number, coerce = false) => {
  const error = `must be an integer from ${min} to ${max}`;
  return (coerce ? z.coerce.number({ error }) : z.number({ error }))
    .int({ error })
    .min(min, { error })
    .max(max, {
      error,
    });
};

/** Fields of every list query: `limit` (1-100, default 50) and the opaque `cursor`. */
export const pageQuery = {
  limit: intRange(1, 100, true)
    .default(50)
    .openapi({ param: { name: "limit", in: "query" }, description: "Items per page, 1-100.", example: 50 }),
  cursor: z
    .string()
    .optional()
    .openapi({
      param: { name: "cursor", in: "query" },
      description: "The `next_cursor` of the previous page.",
    }),
};

/** A UUID in a path; a malformed one answers 404 like an unknown one. */
export const uuidParam = (name: string, description: string) =>
  z
    .string()
    // A refinement, not .regex(): the document then says only `format: uuid`, which generators and
    // clients understand, instead of a pattern that restates it.
    .refine((s) => UUID_PATTERN.test(s))
    .openapi({ param: { name, in: "path" }, format: "uuid", description });

/** An event type of the catalog; an unknown one is named in the error. */
export const EventTypeSchema = z
  .enum(EVENT_TYPES, {
    error: (issue) =>
      typeof issue.input === "string"
        ? `is not an event type of the catalog: "${issue.input}"`
        : "must be an event type of the catalog",
  })
  .openapi("EventType", { description: "An event type of the catalog." });

/** A UTC ISO 8601 timestamp with milliseconds. */
export const timestamp = (description: string) =>
  z.iso.datetime().openapi({ example: "2026-11-21T10:00:00.000Z", description });

/** The envelope of every list answer. */
export const listOf = <T extends z.ZodType>(item: T, name: string) =>
  z
    .object({
      data: z.array(item),
      next_cursor: z
        .string()
        .nullable()
        .openapi({ description: "Pass as `cursor` for the next page; null on the last page." }),
    })
    .openapi(name);

/**
 * A schema that validates (and types) as `schema` but is documented as the named component: the
 * routes keep their own checks and messages while the document shows the per-type union.
 */
export function documentedAs<T extends z.ZodType>(schema: T, component: string) {
  return z
    .unknown()
    .pipe(schema)
    .openapi({ $ref: `#/components/schemas/${component}` } as never);
}
