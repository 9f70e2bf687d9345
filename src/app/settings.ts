import { projectRetention } from "../domain/erasure.ts";
import type { ProjectSettings, SettingsRepository } from "./ports/erasures.ts";
import type { Scope } from "./ports/paging.ts";
import type { Clock } from "./ports/system.ts";

/** A project's settings as the API shows them: its own values, and what applies. */
export interface SettingsView {
  /** The project's own retention; null: it follows HERALD_RETENTION. */
  retentionMs: number | null;
  /** What the maintenance job applies to the project: its own retention, capped by the server's. */
  effectiveRetentionMs: number;
  /** HERALD_RETENTION: the longest retention a project may have. */
  maxRetentionMs: number;
  updatedAt: Date | null;
}

export interface SettingsPatch {
  /** A duration like 7d; null goes back to HERALD_RETENTION; undefined leaves it. */
  retention?: string | null | undefined;
}

/** Per-project settings: for now, a retention shorter than the server's (ADR 15). */
export function settingsUseCases(deps: {
  settings: SettingsRepository;
  clock: Clock;
  maxRetentionMs: number;
}) {
  const { settings, clock, maxRetentionMs } = deps;

  const view = (s: ProjectSettings | null): SettingsView => {
    const own = s?.retentionMs ?? null;
    return {
      retentionMs: own,
      effectiveRetentionMs: own === null ? maxRetentionMs : Math.min(own, maxRetentionMs),
      maxRetentionMs,
      updatedAt: s?.updatedAt ?? null,
    };
  };

  return {
    async get(scope: Scope): Promise<SettingsView> {
      return view(await settings.get(scope));
    },

    async update(scope: Scope, patch: SettingsPatch): Promise<SettingsView> {
      const current = await settings.get(scope);
      let retentionMs = current?.retentionMs ?? null;
      if (patch.retention !== undefined) {
        retentionMs = patch.retention === null ? null : projectRetention(patch.retention, maxRetentionMs);
      }
      const next: ProjectSettings = {
        tenantId: scope.tenantId,
        projectId: scope.projectId,
        retentionMs,
        updatedAt: clock.now(),
      };
      await settings.put(next);
      return view(next);
    },
  };
}

export type SettingsUseCases = ReturnType<typeof settingsUseCases>;
