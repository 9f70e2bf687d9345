import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/app/config.ts";
import { parseTelemetryConfig } from "../../src/app/telemetry-config.ts";

const error = (env: Record<string, string>) => {
  try {
    parseConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error("no error");
};

describe("OpenTelemetry settings (the standard OTEL_* variables)", () => {
  it("is off with nothing set, and with only names, samplers or resource attributes set", () => {
    expect(parseConfig({}).telemetry).toBeNull();
    expect(
      parseTelemetryConfig({
        OTEL_SERVICE_NAME: "x",
        OTEL_TRACES_SAMPLER: "always_on",
        OTEL_RESOURCE_ATTRIBUTES: "a=b",
      }),
    ).toBeNull();
  });

  it("exports both signals to an endpoint, over protobuf by default, with OTel's defaults", () => {
    expect(parseTelemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).toEqual({
      traces: {
        url: "http://collector:4318/v1/traces",
        protocol: "http/protobuf",
        headers: {},
        timeoutMs: 10_000,
        sampler: "parentbased_always_on",
        ratio: 1,
        batchDelayMs: 5_000,
      },
      metrics: {
        url: "http://collector:4318/v1/metrics",
        protocol: "http/protobuf",
        headers: {},
        timeoutMs: 10_000,
        intervalMs: 60_000,
      },
      serviceName: "herald",
      resource: {},
    });
  });

  it("takes the signal's own endpoint, protocol, headers and timeout over the shared ones", () => {
    const c = parseTelemetryConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://otlp.example",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/custom/path",
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20abc,x-team=a",
      OTEL_EXPORTER_OTLP_METRICS_HEADERS: "x-team=b",
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "2500",
      OTEL_METRIC_EXPORT_INTERVAL: "15000",
      OTEL_SERVICE_NAME: "herald-eu",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,service.name=ignored",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
    });
    expect(c?.traces).toMatchObject({
      url: "https://traces.example/custom/path",
      protocol: "http/protobuf",
      headers: { authorization: "Bearer abc", "x-team": "a" },
      timeoutMs: 2_500,
      sampler: "parentbased_traceidratio",
      ratio: 0.25,
    });
    expect(c?.metrics).toMatchObject({
      url: "https://otlp.example/v1/metrics",
      protocol: "http/json",
      headers: { authorization: "Bearer abc", "x-team": "b" },
      timeoutMs: 10_000,
      intervalMs: 15_000,
    });
    expect(c?.serviceName).toBe("herald-eu");
    expect(c?.resource).toEqual({ "deployment.environment": "prod", "service.name": "ignored" });
  });

  it("turns each signal on or off with OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" };
    expect(parseTelemetryConfig({ ...endpoint, OTEL_METRICS_EXPORTER: "none" })).toMatchObject({
      traces: { url: "http://127.0.0.1:4318/v1/traces" },
      metrics: null,
    });
    expect(parseTelemetryConfig({ ...endpoint, OTEL_TRACES_EXPORTER: "none" })).toMatchObject({
      traces: null,
    });
    expect(
      parseTelemetryConfig({ ...endpoint, OTEL_TRACES_EXPORTER: "none", OTEL_METRICS_EXPORTER: "none" }),
    ).toBeNull();
    // otlp with no endpoint: the OTel default, a collector on this host.
    expect(parseTelemetryConfig({ OTEL_TRACES_EXPORTER: "otlp" })).toMatchObject({
      traces: { url: "http://localhost:4318/v1/traces" },
      metrics: null,
    });
    expect(parseTelemetryConfig({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://m:1/x" })).toMatchObject({
      traces: null,
      metrics: { url: "http://m:1/x" },
    });
  });

  it("is off whatever else is set when OTEL_SDK_DISABLED=true", () => {
    expect(
      parseTelemetryConfig({
        OTEL_SDK_DISABLED: "true",
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://a",
      }),
    ).toBeNull();
    expect(parseTelemetryConfig({ OTEL_SDK_DISABLED: "false", OTEL_TRACES_EXPORTER: "otlp" })).not.toBeNull();
  });

  it("stops the start with one line naming the variable; a header's value is never repeated", () => {
    expect(error({ OTEL_TRACES_EXPORTER: "zipkin" })).toMatch(/^OTEL_TRACES_EXPORTER must be otlp or none/);
    expect(error({ OTEL_METRICS_EXPORTER: "prometheus" })).toMatch(
      /^OTEL_METRICS_EXPORTER must be otlp or none/,
    );
    expect(error({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toMatch(
      /^OTEL_EXPORTER_OTLP_ENDPOINT must be an http:\/\/ or https:\/\/ URL/,
    );
    expect(error({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "ftp://x" })).toMatch(
      /^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT/,
    );
    expect(error({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toMatch(
      /^OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json \(got "grpc"/,
    );
    expect(error({ OTEL_TRACES_SAMPLER: "sometimes" })).toMatch(/^OTEL_TRACES_SAMPLER must be one of/);
    expect(error({ OTEL_TRACES_SAMPLER_ARG: "2" })).toMatch(
      /^OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/,
    );
    expect(error({ OTEL_SDK_DISABLED: "maybe" })).toMatch(/^OTEL_SDK_DISABLED must be true or false/);
    expect(error({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a", OTEL_BSP_SCHEDULE_DELAY: "soon" })).toMatch(
      /^OTEL_BSP_SCHEDULE_DELAY must be a whole number of milliseconds/,
    );
    const secret = "s3cr3t-token%zz";
    const bad = error({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://a",
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=${secret}`,
    });
    expect(bad).toMatch(/^OTEL_EXPORTER_OTLP_HEADERS must be a list of key=value pairs/);
    expect(bad).not.toContain("s3cr3t");
    const noKey = error({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a", OTEL_EXPORTER_OTLP_HEADERS: "=s3cr3t" });
    expect(noKey).not.toContain("s3cr3t");
    expect(
      error({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a", OTEL_EXPORTER_OTLP_HEADERS: "bad name=1" }),
    ).toMatch(/not an HTTP header name/);
    expect(bad.includes("\n")).toBe(false);
  });
});
