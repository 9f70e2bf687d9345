import type { OpenAPIHonoOptions } from "@hono/zod-openapi";
import type { ValidationIssue } from "../../domain/errors.ts";
import type { AppEnv } from "./env.ts";
import { respondProblem } from "./problem.ts";

const PREFIX: Record<string, string> = { json: "body", query: "query", header: "header", form: "body" };

// A malformed id in a path names nothing, exactly like an unknown one: 404, not 422.
function resourceOf(routePath: string): string {
  if (routePath.includes("/deliveries/")) return "The delivery";
  if (routePath.includes("/events/")) return "The event";
  return "The endpoint";
}

/** zod-openapi's defaultHook: schema failures become 422 validation_failed (path parameters: 404). */
export const validationHook: NonNullable<OpenAPIHonoOptions<AppEnv>["defaultHook"]> = (result, c) => {
  if (result.success) return;
  if (result.target === "param") {
    return respondProblem(c, { code: "not_found", detail: `${resourceOf(c.req.routePath)} was not found.` });
  }
  const prefix = PREFIX[result.target] ?? result.target;
  const errors: ValidationIssue[] = result.error.issues.map((issue) => ({
    path: [prefix, ...issue.path.map(String)].join("."),
    message: issue.message,
  }));
  return respondProblem(c, { code: "validation_failed", detail: "The request is not valid.", errors });
};
