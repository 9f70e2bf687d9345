import { describe, expect, it } from "vitest";
import { createPrometheusMetrics } from "../../../src/adapters/metrics/prometheus.ts";

describe("prometheus metrics", () => {
  it("counts database commands by command and collection, and the documents they write", async () => {
    const p = createPrometheusMetrics(async () => ({ dueBacklog: 0, oldestDueAgeSeconds: 0 }));
    p.dbCommand("find", "deliveries");
    p.dbCommand("find", "deliveries");
    p.dbCommand("insert", "events", 12);
    p.dbCommand("ping", "");
    const text = await p.render();
    expect(text).toContain('herald_db_commands_total{command="find",collection="deliveries"} 2');
    expect(text).toContain('herald_db_commands_total{command="insert",collection="events"} 1');
    expect(text).toContain('herald_db_commands_total{command="ping",collection=""} 1');
    expect(text).toContain("herald_db_documents_written_total 12");
  });
});
