import type { RecordingBacklog } from "../../app/engine/record.ts";
import type { FanOutMetrics } from "../../app/ports/events.ts";
import type { DeliveryMetrics } from "../../app/ports/sending.ts";

const BUCKETS_MS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000];

class Histogram {
  readonly counts = new Array<number>(BUCKETS_MS.length).fill(0);
  sum = 0;
  count = 0;

  observe(ms: number) {
    this.sum += ms;
    this.count++;
    for (let i = 0; i < BUCKETS_MS.length; i++) if (ms <= BUCKETS_MS[i]!) this.counts[i]!++;
  }

  render(name: string): string[] {
    const lines = BUCKETS_MS.map((b, i) => `${name}_bucket{le="${b / 1000}"} ${this.counts[i]}`);
    lines.push(
      `${name}_bucket{le="+Inf"} ${this.count}`,
      `${name}_sum ${this.sum / 1000}`,
      `${name}_count ${this.count}`,
    );
    return lines;
  }
}

const label = (v: string) => v.replace(/["\\\n]/g, "_");

/** Recording's figures (issue 31): read from the engine, so they answer while the database does not. */
function recordingLines(b: RecordingBacklog | null): string[] {
  if (b === null) return [];
  return [
    "# HELP herald_record_failures_total Failed writes of delivery results, by the store's kind of failure.",
    "# TYPE herald_record_failures_total counter",
    ...Object.entries(b.failures).map(([k, n]) => `herald_record_failures_total{kind="${label(k)}"} ${n}`),
    "# HELP herald_results_handed_back_total Delivery results that could not be recorded; their deliveries were handed back to be sent again.",
    "# TYPE herald_results_handed_back_total counter",
    ...Object.entries(b.handedBack).map(
      ([k, n]) => `herald_results_handed_back_total{kind="${label(k)}"} ${n}`,
    ),
    "# HELP herald_results_unrecorded Delivery results sent and not recorded yet.",
    "# TYPE herald_results_unrecorded gauge",
    `herald_results_unrecorded ${b.waiting}`,
    "# HELP herald_oldest_unrecorded_age_seconds How long the oldest result not recorded yet has waited.",
    "# TYPE herald_oldest_unrecorded_age_seconds gauge",
    `herald_oldest_unrecorded_age_seconds ${b.oldestMs / 1000}`,
  ];
}

/** Delivery metrics kept in process memory and written in the Prometheus text format. */
export function createPrometheusMetrics(
  gauges: () => Promise<{ dueBacklog: number; oldestDueAgeSeconds: number; fifoHeld?: number }>,
  /** How far behind recording results is (the engine's), null before the engine exists. */
  recording: () => RecordingBacklog | null = () => null,
) {
  const outcomes = new Map<string, number>();
  const disabled = new Map<string, number>();
  let leaseRecoveries = 0;
  let shardsOwned = 0;
  const dbCommands = new Map<string, number>();
  let dbDocumentsWritten = 0;
  const attemptLatency = new Histogram();
  const publishLatency = new Histogram();
  const filtered = new Map<string, number>();

  const metrics: DeliveryMetrics = {
    attempt({ status, error, durationMs }) {
      const key = `outcome="${label(status)}",error="${label(error ?? "")}"`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      if (durationMs !== null) attemptLatency.observe(durationMs);
    },
    leaseRecovered(count) {
      leaseRecoveries += count;
    },
    shardsOwned(count) {
      shardsOwned = count;
    },
    endpointDisabled(reason) {
      disabled.set(reason, (disabled.get(reason) ?? 0) + 1);
    },
    publishToAttempt(ms) {
      publishLatency.observe(ms);
    },
  };

  const fanOut: FanOutMetrics = {
    eventsFiltered(type, endpoints) {
      filtered.set(type, (filtered.get(type) ?? 0) + endpoints);
    },
  };

  /** Counts one database command (MongoDB command monitoring) and the documents it writes: the benchmark's figures. */
  function dbCommand(command: string, collection: string, written = 0) {
    const key = `command="${label(command)}",collection="${label(collection)}"`;
    dbCommands.set(key, (dbCommands.get(key) ?? 0) + 1);
    dbDocumentsWritten += written;
  }

  async function render(): Promise<string> {
    const lines: string[] = [];
    lines.push(
      "# HELP herald_db_commands_total Database commands sent (round trips), by command and collection.",
    );
    lines.push("# TYPE herald_db_commands_total counter");
    for (const [k, v] of dbCommands) lines.push(`herald_db_commands_total{${k}} ${v}`);
    lines.push("# HELP herald_db_documents_written_total Documents the database commands sent would write.");
    lines.push("# TYPE herald_db_documents_written_total counter");
    lines.push(`herald_db_documents_written_total ${dbDocumentsWritten}`);
    lines.push("# HELP herald_deliveries_total Delivery attempts recorded, by outcome and error code.");
    lines.push("# TYPE herald_deliveries_total counter");
    for (const [k, v] of outcomes) lines.push(`herald_deliveries_total{${k}} ${v}`);
    lines.push("# HELP herald_delivery_duration_seconds Time one delivery attempt took.");
    lines.push("# TYPE herald_delivery_duration_seconds histogram");
    lines.push(...attemptLatency.render("herald_delivery_duration_seconds"));
    lines.push(
      "# HELP herald_publish_to_attempt_seconds Time from accepting an event to its first attempt finishing.",
    );
    lines.push("# TYPE herald_publish_to_attempt_seconds histogram");
    lines.push(...publishLatency.render("herald_publish_to_attempt_seconds"));
    lines.push(
      "# HELP herald_lease_recoveries_total Endpoint shards taken over after their owner's lease expired (it died or stalled).",
    );
    lines.push("# TYPE herald_lease_recoveries_total counter");
    lines.push(`herald_lease_recoveries_total ${leaseRecoveries}`);
    lines.push("# HELP herald_shards_owned Endpoint shards this process owns now (of 256).");
    lines.push("# TYPE herald_shards_owned gauge");
    lines.push(`herald_shards_owned ${shardsOwned}`);
    lines.push(
      "# HELP herald_endpoints_disabled_total Endpoints disabled by the delivery engine, by reason.",
    );
    lines.push("# TYPE herald_endpoints_disabled_total counter");
    for (const reason of ["gone", "failing"]) {
      lines.push(`herald_endpoints_disabled_total{reason="${reason}"} ${disabled.get(reason) ?? 0}`);
    }
    lines.push(
      "# HELP herald_events_filtered_total Events not delivered to a subscribed endpoint because its filter did not match, counted per endpoint, by event type.",
    );
    lines.push("# TYPE herald_events_filtered_total counter");
    for (const [type, n] of filtered) lines.push(`herald_events_filtered_total{type="${label(type)}"} ${n}`);
    lines.push(...recordingLines(recording()));
    try {
      const g = await gauges();
      lines.push("# HELP herald_due_backlog Pending deliveries that are due now.");
      lines.push("# TYPE herald_due_backlog gauge");
      lines.push(`herald_due_backlog ${g.dueBacklog}`);
      lines.push("# HELP herald_oldest_due_age_seconds How long the oldest due delivery has waited.");
      lines.push("# TYPE herald_oldest_due_age_seconds gauge");
      lines.push(`herald_oldest_due_age_seconds ${g.oldestDueAgeSeconds}`);
      if (g.fifoHeld !== undefined) {
        lines.push(
          "# HELP herald_fifo_held Deliveries held back by ordering: pending behind the head of a FIFO endpoint.",
        );
        lines.push("# TYPE herald_fifo_held gauge");
        lines.push(`herald_fifo_held ${g.fifoHeld}`);
      }
    } catch {
      lines.push("# herald_due_backlog unavailable: the database did not answer");
    }
    return `${lines.join("\n")}\n`;
  }

  return { metrics, fanOut, render, dbCommand };
}
