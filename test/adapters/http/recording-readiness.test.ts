import { describe, expect, it } from "vitest";
import {
  RECORDING_BEHIND_MS,
  recordingBehind,
} from "../../../src/adapters/http/routes/operations/recording-readiness.ts";
import { createPrometheusMetrics } from "../../../src/adapters/metrics/prometheus.ts";
import type { RecordingBacklog } from "../../../src/app/engine/record.ts";
import { makeApiHarness } from "../../support/api-harness.ts";

// Issue 31: /readyz and /metrics say when recording delivery results is behind (how many wait, for how
// long), from the engine's own figures, so they answer while the database does not.

const backlog = (over: Partial<RecordingBacklog> = {}): RecordingBacklog => ({
  waiting: 0,
  oldestMs: 0,
  stalledMs: null,
  failure: null,
  failures: {},
  handedBack: {},
  ...over,
});

describe("readiness and metrics for recording delivery results", () => {
  it("is ready while results are recorded within the limit; not ready once the oldest has waited longer", () => {
    expect(recordingBehind(null)).toBeNull();
    expect(recordingBehind(backlog())).toBeNull();
    expect(recordingBehind(backlog({ waiting: 900, oldestMs: RECORDING_BEHIND_MS - 1 }))).toBeNull();
    expect(
      recordingBehind(backlog({ waiting: 541, oldestMs: 61_400, stalledMs: 61_000, failure: "timeout" })),
    ).toBe(
      "Recording delivery results is behind: 541 results wait, the oldest for 61 s (the last write failed: timeout).",
    );
  });

  it("GET /readyz answers 503 with the reason while recording is behind, 200 once it keeps up", async () => {
    let now = backlog({ waiting: 12, oldestMs: 45_000, failure: "unreachable" });
    const h = await makeApiHarness({ override: () => ({ recording: () => now }) });
    const behind = await h.fetch(new Request(`${h.baseUrl}/readyz`));
    expect(behind.status).toBe(503);
    expect(behind.headers.get("retry-after")).not.toBeNull();
    expect((await behind.json()).detail).toBe(
      "Recording delivery results is behind: 12 results wait, the oldest for 45 s (the last write failed: unreachable).",
    );
    // Logged with its reason, not as the database's fault (the database may answer perfectly well).
    const lines = h.logLines.map((l) => JSON.parse(l) as { msg: string; detail?: string });
    expect(lines.map((l) => l.msg)).not.toContain("database unavailable");
    expect(lines.find((l) => l.msg === "service unavailable")?.detail).toMatch(
      /^Recording delivery results is behind/,
    );
    now = backlog();
    expect((await h.fetch(new Request(`${h.baseUrl}/readyz`))).status).toBe(200);
  });

  it("/metrics shows what waits, for how long, and failures and hand-backs by kind, even without the database", async () => {
    const p = createPrometheusMetrics(
      async () => {
        throw new Error("the database does not answer");
      },
      () =>
        backlog({
          waiting: 7,
          oldestMs: 2_500,
          failures: { timeout: 3, refused: 1 },
          handedBack: { refused: 1 },
        }),
    );
    const text = await p.render();
    expect(text).toContain("herald_results_unrecorded 7");
    expect(text).toContain("herald_oldest_unrecorded_age_seconds 2.5");
    expect(text).toContain('herald_record_failures_total{kind="timeout"} 3');
    expect(text).toContain('herald_record_failures_total{kind="refused"} 1');
    expect(text).toContain('herald_results_handed_back_total{kind="refused"} 1');
  });
});
