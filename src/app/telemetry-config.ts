// The standard OTEL_* variables Herald honours (ADR 24), read once at start like every other setting.
// Off by default: a signal is exported only when its exporter is `otlp`, or an OTLP endpoint is set and
// its exporter is not `none`. A bad value stops the start with one line naming the variable; a header
// value is never repeated in it (it is usually a credential).

/** Where and how one signal (traces or metrics) is exported: OTLP over HTTP. */
export interface OtlpTarget {
  /** The full URL posted to (…/v1/traces, …/v1/metrics). */
  url: string;
  protocol: "http/protobuf" | "http/json";
  /** Sent with every export (OTEL_EXPORTER_OTLP_HEADERS and the signal's own); never logged. */
  headers: Record<string, string>;
  timeoutMs: number;
}

export type SamplerName =
  | "always_on"
  | "always_off"
  | "traceidratio"
  | "parentbased_always_on"
  | "parentbased_always_off"
  | "parentbased_traceidratio";

export interface TelemetryConfig {
  traces: (OtlpTarget & { sampler: SamplerName; ratio: number; batchDelayMs: number }) | null;
  metrics: (OtlpTarget & { intervalMs: number }) | null;
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, decoded. */
  resource: Record<string, string>;
}

export class TelemetryConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable} ${message}`);
    this.variable = variable;
  }
}

const SAMPLERS: readonly SamplerName[] = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
];

const DEFAULT_ENDPOINT = "http://localhost:4318";

/** The telemetry settings, or null when neither traces nor metrics are exported (the default). */
export function parseTelemetryConfig(env: Record<string, string | undefined>): TelemetryConfig | null {
  const get = (name: string) => setting(env, name);
  /** The signal's own variable when it is set, else the general one. */
  const specific = (signal: "TRACES" | "METRICS", suffix: string) =>
    get(`OTEL_EXPORTER_OTLP_${signal}_${suffix}`) !== undefined
      ? `OTEL_EXPORTER_OTLP_${signal}_${suffix}`
      : `OTEL_EXPORTER_OTLP_${suffix}`;
  const disabled = get("OTEL_SDK_DISABLED")?.toLowerCase();
  if (disabled !== undefined && disabled !== "true" && disabled !== "false")
    throw new TelemetryConfigError("OTEL_SDK_DISABLED", `must be true or false (got "${disabled}")`);

  const wanted = (signal: "TRACES" | "METRICS"): boolean => {
    const name = `OTEL_${signal}_EXPORTER`;
    const exporter = get(name)?.toLowerCase();
    if (exporter !== undefined && exporter !== "otlp" && exporter !== "none")
      throw new TelemetryConfigError(
        name,
        `must be otlp or none (got "${exporter}"; Herald exports over OTLP/HTTP only)`,
      );
    if (exporter !== undefined) return exporter === "otlp";
    return (
      get("OTEL_EXPORTER_OTLP_ENDPOINT") !== undefined ||
      get(`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`) !== undefined
    );
  };

  const target = (signal: "TRACES" | "METRICS", path: string): OtlpTarget => {
    const own = `OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`;
    const base = get("OTEL_EXPORTER_OTLP_ENDPOINT");
    const [name, url] =
      get(own) !== undefined
        ? [own, get(own)!]
        : ["OTEL_EXPORTER_OTLP_ENDPOINT", `${(base ?? DEFAULT_ENDPOINT).replace(/\/+$/, "")}/${path}`];
    let parsed: URL | null = null;
    try {
      parsed = new URL(url);
    } catch {}
    if (parsed === null || (parsed.protocol !== "http:" && parsed.protocol !== "https:"))
      throw new TelemetryConfigError(name, "must be an http:// or https:// URL");
    const protocolName = specific(signal, "PROTOCOL");
    const protocol = get(protocolName) ?? "http/protobuf";
    if (protocol !== "http/protobuf" && protocol !== "http/json")
      throw new TelemetryConfigError(
        protocolName,
        `must be http/protobuf or http/json (got "${protocol}"; Herald does not export over gRPC)`,
      );
    return {
      url,
      protocol,
      headers: {
        ...headerList(env, "OTEL_EXPORTER_OTLP_HEADERS"),
        ...headerList(env, `OTEL_EXPORTER_OTLP_${signal}_HEADERS`),
      },
      timeoutMs: millis(env, specific(signal, "TIMEOUT"), 10_000),
    };
  };

  // Every variable is checked even when the SDK is disabled: a typo is found before it matters.
  const tracesOn = wanted("TRACES");
  const metricsOn = wanted("METRICS");
  const samplerText = get("OTEL_TRACES_SAMPLER")?.toLowerCase() ?? "parentbased_always_on";
  if (!SAMPLERS.includes(samplerText as SamplerName))
    throw new TelemetryConfigError(
      "OTEL_TRACES_SAMPLER",
      `must be one of ${SAMPLERS.join(", ")} (got "${samplerText}")`,
    );
  const ratioText = get("OTEL_TRACES_SAMPLER_ARG");
  const ratio = ratioText === undefined ? 1 : Number(ratioText);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1)
    throw new TelemetryConfigError(
      "OTEL_TRACES_SAMPLER_ARG",
      `must be a number from 0 to 1 (got "${ratioText}")`,
    );
  const traces = tracesOn
    ? {
        ...target("TRACES", "v1/traces"),
        sampler: samplerText as SamplerName,
        ratio,
        batchDelayMs: millis(env, "OTEL_BSP_SCHEDULE_DELAY", 5_000),
      }
    : null;
  const metrics = metricsOn
    ? { ...target("METRICS", "v1/metrics"), intervalMs: millis(env, "OTEL_METRIC_EXPORT_INTERVAL", 60_000) }
    : null;
  const resource = keyValues(env, "OTEL_RESOURCE_ATTRIBUTES");
  if (disabled === "true" || (traces === null && metrics === null)) return null;
  return {
    traces,
    metrics,
    serviceName: get("OTEL_SERVICE_NAME") ?? resource["service.name"] ?? "herald",
    resource,
  };
}

/** A variable's value, trimmed; undefined when it is unset or blank. */
function setting(env: Record<string, string | undefined>, name: string): string | undefined {
  const text = env[name]?.trim();
  return text === undefined || text === "" ? undefined : text;
}

function millis(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const text = setting(env, name);
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 3_600_000)
    throw new TelemetryConfigError(
      name,
      `must be a whole number of milliseconds from 1 to 3600000 (got "${text}")`,
    );
  return Number(text);
}

/** `key1=value1,key2=value2`, values percent-encoded (the OTel specification's format). */
function keyValues(env: Record<string, string | undefined>, name: string): Record<string, string> {
  const text = setting(env, name);
  const out: Record<string, string> = {};
  if (text === undefined) return out;
  for (const item of text.split(",")) {
    if (item.trim() === "") continue;
    const at = item.indexOf("=");
    const key = at > 0 ? item.slice(0, at).trim() : "";
    let value: string | null = null;
    try {
      value = decodeURIComponent(item.slice(at + 1).trim());
    } catch {}
    // The value is not repeated: OTEL_EXPORTER_OTLP_HEADERS carries credentials.
    if (key === "" || value === null)
      throw new TelemetryConfigError(
        name,
        "must be a list of key=value pairs separated by commas, values percent-encoded",
      );
    out[key] = value;
  }
  return out;
}

function headerList(env: Record<string, string | undefined>, name: string): Record<string, string> {
  const pairs = keyValues(env, name);
  for (const key of Object.keys(pairs))
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key))
      throw new TelemetryConfigError(name, `holds "${key}", which is not an HTTP header name`);
  return pairs;
}
