import type { OpenAPIHonoOptions } from "@hono/zod-openapi";
import type { ValidationIssue } from "../../domain/errors.ts";
import type { AppEnv } from "./env.ts";
import { respondProblem } from "./problem.ts";
import "./wording.ts";

const PREFIX: Record<string, string> = { json: "body", query: "query", header: "header", form: "body" };

// A malformed id in a path names nothing, exactly like an unknown one: 404, not 422.
function resourceOf(routePath: string): string {
  if (routePath.includes("/deliveries/")) return "The delivery";
  if (routePath.includes("/events/")) return "The event";
  if (routePath.includes("/erasures/")) return "The erasure";
  return "The endpoint";
}

interface SchemaIssue {
  code?: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
}

/** A schema's issues as Herald's: located by a dotted path, one per unknown field. Messages are predicates. */
export function schemaIssues(prefix: string, issues: readonly SchemaIssue[]): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const issue of issues) {
    const at = [prefix, ...issue.path.map(String)];
    if (issue.code === "unrecognized_keys" && issue.keys) {
      for (const key of issue.keys) out.push({ path: [...at, key].join("."), message: issue.message });
    } else {
      out.push({ path: at.join("."), message: issue.message });
    }
  }
  return out;
}

/** zod-openapi's defaultHook: schema failures become 422 validation_failed (path parameters: 404). */
export const validationHook: NonNullable<OpenAPIHonoOptions<AppEnv>["defaultHook"]> = (result, c) => {
  if (result.success) return;
  if (result.target === "param") {
    return respondProblem(c, { code: "not_found", detail: `${resourceOf(c.req.routePath)} was not found.` });
  }
  const errors = schemaIssues(PREFIX[result.target] ?? result.target, result.error.issues);
  return respondProblem(c, { code: "validation_failed", detail: "The request is not valid.", errors });
};
