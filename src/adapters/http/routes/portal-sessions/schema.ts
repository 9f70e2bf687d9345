import { z } from "@hono/zod-openapi";
import { UUID_PATTERN } from "../../../../domain/ids.ts";
import { uuidParam } from "../shared.ts";

export const CreatePortalSessionSchema = z
  .object({
    expires_in: z.number().int().min(60).max(86_400).optional().openapi({
      description:
        "Seconds until the link and every browser session it opened expire (60-86400, default 3600).",
      example: 3600,
    }),
    webhook_ids: z
      .array(z.string().regex(UUID_PATTERN, { error: "must be an endpoint id (UUID)" }))
      .min(1)
      .max(100)
      .optional()
      .openapi({
        description: "Limit the portal to these endpoints of the project; absent: all of them.",
      }),
  })
  .strict()
  .openapi("CreatePortalSessionRequest");

export const PortalSessionSchema = z
  .object({
    id: z.string().openapi({ format: "uuid", description: "Revoke with DELETE /portal-sessions/{id}." }),
    url: z.string().openapi({
      format: "uri",
      description: "Opens the customer portal; works until it expires or is revoked. Treat it as a secret.",
      example: "https://herald.example.com/portal/enter?code=3q2-…",
    }),
    expires_at: z.iso.datetime().openapi({ example: "2026-11-21T11:00:00.000Z" }),
    webhook_ids: z
      .array(z.string())
      .nullable()
      .openapi({ description: "The endpoints it is limited to; null: all." }),
  })
  .openapi("PortalSession");

export const PortalSessionIdParams = z.object({ id: uuidParam("id", "The portal session's id.") });
