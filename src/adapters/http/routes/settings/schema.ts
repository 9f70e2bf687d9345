import { z } from "@hono/zod-openapi";
import type { SettingsView } from "../../../../app/settings.ts";
import { formatDuration, isoMillis } from "../../../../domain/time.ts";

const duration = (description: string) =>
  z.string().openapi({ description, example: "7d", pattern: "^\\d+(ms|s|m|h|d)$" });

export const UpdateSettingsSchema = z
  .strictObject({
    retention: z.string().max(32).nullable().optional().openapi({
      description:
        "How long the project's events, delivery records and erasure records are kept, written like HERALD_RETENTION (`12h`, `7d`); at least `1m` and at most the server's HERALD_RETENTION (422 otherwise). null follows HERALD_RETENTION again.",
      example: "7d",
    }),
  })
  .refine((o) => Object.values(o).some((v) => v !== undefined), {
    error: "must contain at least one of retention",
  })
  .openapi("UpdateSettingsRequest");

export const SettingsSchema = z
  .object({
    retention: duration(
      "The project's own retention; null: it follows the server's HERALD_RETENTION.",
    ).nullable(),
    effective_retention: duration(
      "What the hourly retention job applies to the project: its own retention, never longer than the server's.",
    ),
    max_retention: duration("The server's HERALD_RETENTION: the longest retention a project may choose."),
    updated_at: z.iso
      .datetime()
      .nullable()
      .openapi({ example: "2026-11-21T10:00:00.000Z", description: "Last change; null: never changed." }),
  })
  .openapi("Settings", { description: "The project's settings." });

export type SettingsJson = z.infer<typeof SettingsSchema>;

/** The public JSON of a project's settings. */
export function presentSettings(s: SettingsView): SettingsJson {
  return {
    retention: s.retentionMs === null ? null : formatDuration(s.retentionMs),
    effective_retention: formatDuration(s.effectiveRetentionMs),
    max_retention: formatDuration(s.maxRetentionMs),
    updated_at: s.updatedAt ? isoMillis(s.updatedAt) : null,
  };
}
