import type { RecordingBacklog } from "../../../../app/engine/record.ts";

/** Results unrecorded this long make the process not ready: recording is behind (issue 31). */
export const RECORDING_BEHIND_MS = 30_000;

/**
 * Why the process is not ready for its recording of delivery results, or null while it keeps up: a
 * result that has waited RECORDING_BEHIND_MS or more means the engine has stopped taking new work
 * (back-pressure) and publishes are better served by another process. Counts, ages and the kind of the
 * last failure only: never a result's content.
 */
export function recordingBehind(b: RecordingBacklog | null): string | null {
  if (b === null || b.waiting === 0 || b.oldestMs < RECORDING_BEHIND_MS) return null;
  const why = b.failure === null ? "" : ` (the last write failed: ${b.failure})`;
  return `Recording delivery results is behind: ${b.waiting} results wait, the oldest for ${Math.round(b.oldestMs / 1000)} s${why}.`;
}
