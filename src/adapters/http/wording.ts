import { z } from "@hono/zod-openapi";

/**
 * Herald's wording for schema failures. zod's own messages ("Invalid input: expected string, received
 * undefined") never reach a client: this error map is installed once as zod's global fallback, so
 * every default message is replaced, while the messages a schema states itself keep precedence. The
 * problem builder then puts the field's name in front (`limit must be ...`, `url is required`).
 */
export function heraldPredicate(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "is required";
      return `must be ${TYPE_NAMES[issue.expected] ?? `of type ${issue.expected}`}`;
    case "too_small": {
      const min = Number(issue.minimum);
      const incl = issue.inclusive !== false;
      if (issue.origin === "string") {
        return min <= 1 && incl ? "must not be empty" : `must be at least ${min} characters long`;
      }
      if (issue.origin === "array" || issue.origin === "set") {
        return min <= 1 && incl ? "must not be empty" : `must have at least ${min} items`;
      }
      return incl ? `must be at least ${min}` : `must be greater than ${min}`;
    }
    case "too_big": {
      const max = Number(issue.maximum);
      const incl = issue.inclusive !== false;
      if (issue.origin === "string") return `must be at most ${max} characters long`;
      if (issue.origin === "array" || issue.origin === "set") return `must have at most ${max} items`;
      return incl ? `must be at most ${max}` : `must be less than ${max}`;
    }
    case "invalid_format":
      return FORMAT_NAMES[issue.format] ?? "is not in the expected format";
    case "invalid_value":
      if (issue.values.length === 1) return `must be ${JSON.stringify(issue.values[0])}`;
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "not_multiple_of":
      return `must be a multiple of ${issue.divisor}`;
    case "unrecognized_keys":
      return "is not a field of this request";
    case "invalid_key":
      return "has a key that is not allowed";
    case "invalid_union":
      return "does not match any of the accepted forms";
    case "invalid_element":
      return "has an item that is not allowed";
    default:
      return "is not valid";
  }
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  object: "a JSON object",
  record: "a JSON object",
  array: "an array",
  tuple: "an array",
  null: "null",
  date: "a date",
};

const FORMAT_NAMES: Record<string, string> = {
  uuid: "must be a UUID",
  guid: "must be a UUID",
  email: "must be an e-mail address",
  datetime: "must be an ISO 8601 timestamp such as 2026-11-21T10:00:00Z",
  date: "must be a date such as 2026-11-21",
  url: "must be a URL",
  regex: "is not in the expected format",
  starts_with: "is not in the expected format",
  ends_with: "is not in the expected format",
  includes: "is not in the expected format",
};

z.config({ customError: heraldPredicate });

/** The name a message uses for the field at a path: `url`, `events.1`, `data.metadata`; the root is "the request body". */
export function fieldName(path: string): string {
  const parts = path.split(".");
  if (parts.length === 1) return parts[0] === "body" ? "the request body" : parts[0] || "the request";
  return parts.slice(1).join(".");
}

/** A full validation message: the field's name, then what is wrong with it. */
export function issueMessage(path: string, predicate: string): string {
  return `${fieldName(path)} ${predicate}`;
}
