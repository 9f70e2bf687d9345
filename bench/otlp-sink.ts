// BENCH_OTEL=1: an OTLP/HTTP sink on loopback that Herald exports its traces and metrics to during the
// benchmark, so the run measures what tracing costs when on (ADR 24). It answers every export with
// success and counts them; decoding is the collector's work, not Herald's, and is not done here.
import { createServer } from "node:http";

export interface OtlpSink {
  endpoint: string;
  readonly stats: { traceExports: number; metricExports: number; bytes: number };
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  const stats = { traceExports: 0, metricExports: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on("data", (c: Buffer) => {
      stats.bytes += c.length;
    });
    req.on("end", () => {
      if (req.url === "/v1/traces") stats.traceExports++;
      else if (req.url === "/v1/metrics") stats.metricExports++;
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
