// OpenTelemetry export, loaded only when asked for (ADR 24): with no OTEL_* variable asking, nothing
// of the SDK is imported, no exporter exists, and the use cases and the engine hold `tracing: null`.
import type { Logger } from "../../app/logger.ts";
import type { TelemetryConfig } from "../../app/telemetry-config.ts";
import type { Telemetry } from "./telemetry.ts";

export type { Gauges, Telemetry } from "./telemetry.ts";

/** Starts OpenTelemetry export as configured, or answers null (and loads nothing) when it is off. */
export async function loadTelemetry(
  config: TelemetryConfig | null | undefined,
  logger: Logger,
  version: string,
): Promise<Telemetry | null> {
  if (!config) return null;
  const { startTelemetry } = await import("./otel-sdk.ts");
  return startTelemetry(config, logger, version);
}
