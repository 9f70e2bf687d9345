// A real OTLP/HTTP receiver on loopback, as an OpenTelemetry Collector's `otlp` receiver takes exports:
// POST /v1/traces and /v1/metrics, bodies in protobuf (application/x-protobuf) or JSON (application/json),
// gzip or not. It decodes what Herald's real exporters send (the protobuf by the OTLP schema's field
// numbers, opentelemetry-proto's trace.proto, metrics.proto and common.proto) and records it.
import { createServer, type IncomingHttpHeaders } from "node:http";
import { gunzipSync } from "node:zlib";
import { PATIENCE_MS } from "./patience.ts";

export type AttributeValue = string | number | boolean | null;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  /** OTLP's StatusCode: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** The resource's attributes (service.name, ...). */
  resource: Record<string, AttributeValue>;
}

export interface ReceivedMetric {
  name: string;
  resource: Record<string, AttributeValue>;
  /** A sum's or gauge's data points (none for a histogram). */
  points: { attributes: Record<string, AttributeValue>; value: number }[];
}

export interface ReceivedExport {
  path: string;
  contentType: string;
  headers: IncomingHttpHeaders;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the value of OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  readonly exports: readonly ReceivedExport[];
  readonly spans: readonly ReceivedSpan[];
  /** The metrics received, in order: name, resource, and a sum's or gauge's points (sums cumulative). */
  readonly metrics: readonly ReceivedMetric[];
  /** Resolves once `predicate` holds, checked on every export; rejects after `timeoutMs` saying what came. */
  waitFor(predicate: (r: OtlpReceiver) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

// ------------------------------------------------------------------------------------ protobuf wire format

type Field = { no: number; wire: number; varint: bigint; bytes: Uint8Array };

function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let i = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[i++]!;
      v |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, varint: varint(), bytes: new Uint8Array() });
    else if (wire === 1) {
      out.push({ no, wire, varint: view.getBigUint64(i, true), bytes: buf.subarray(i, i + 8) });
      i += 8;
    } else if (wire === 2) {
      const len = Number(varint());
      out.push({ no, wire, varint: 0n, bytes: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 5) {
      out.push({ no, wire, varint: BigInt(view.getUint32(i, true)), bytes: buf.subarray(i, i + 4) });
      i += 4;
    } else throw new Error(`unsupported protobuf wire type ${wire}`);
  }
  return out;
}

const all = (buf: Uint8Array, no: number) => fields(buf).filter((f) => f.no === no);
const one = (buf: Uint8Array, no: number) => all(buf, no)[0];
const text = (f: Field | undefined) => (f ? new TextDecoder().decode(f.bytes) : "");
const hex = (f: Field | undefined) => (f ? Buffer.from(f.bytes).toString("hex") : "");

/** common.proto KeyValue: 1 key, 2 AnyValue (1 string, 2 bool, 3 int, 4 double). */
function protoAttributes(kvs: Field[]): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const kv of kvs) {
    const value = one(kv.bytes, 2);
    const v = value ? fields(value.bytes)[0] : undefined;
    let decoded: AttributeValue = null;
    if (v?.no === 1) decoded = text(v);
    else if (v?.no === 2) decoded = v.varint !== 0n;
    else if (v?.no === 3) decoded = Number(BigInt.asIntN(64, v.varint));
    else if (v?.no === 4) decoded = new DataView(v.bytes.buffer, v.bytes.byteOffset, 8).getFloat64(0, true);
    out[text(one(kv.bytes, 1))] = decoded;
  }
  return out;
}

/** ExportTraceServiceRequest: 1 ResourceSpans (1 Resource, 2 ScopeSpans (2 Span)). */
function protoSpans(body: Uint8Array): ReceivedSpan[] {
  return all(body, 1).flatMap((rs) => {
    const resourceField = one(rs.bytes, 1);
    const resource = resourceField ? protoAttributes(all(resourceField.bytes, 1)) : {};
    return all(rs.bytes, 2).flatMap((ss) =>
      all(ss.bytes, 2).map((s): ReceivedSpan => {
        const status = one(s.bytes, 15);
        return {
          traceId: hex(one(s.bytes, 1)),
          spanId: hex(one(s.bytes, 2)),
          parentSpanId: hex(one(s.bytes, 4)),
          name: text(one(s.bytes, 5)),
          kind: Number(one(s.bytes, 6)?.varint ?? 0n),
          attributes: protoAttributes(all(s.bytes, 9)),
          statusCode: status ? Number(one(status.bytes, 3)?.varint ?? 0n) : 0,
          resource,
        };
      }),
    );
  });
}

/** NumberDataPoint: 7 attributes, 4 as_double (fixed64), 6 as_int (sfixed64). */
function protoPoint(p: Uint8Array) {
  const double = one(p, 4);
  const int = one(p, 6);
  const value = double
    ? new DataView(double.bytes.buffer, double.bytes.byteOffset, 8).getFloat64(0, true)
    : Number(BigInt.asIntN(64, int?.varint ?? 0n));
  return { attributes: protoAttributes(all(p, 7)), value };
}

/**
 * ExportMetricsServiceRequest: 1 ResourceMetrics (1 Resource, 2 ScopeMetrics (2 Metric (1 name, 5 Gauge,
 * 7 Sum; each 1 NumberDataPoint))).
 */
function protoMetrics(body: Uint8Array): ReceivedMetric[] {
  return all(body, 1).flatMap((rm) => {
    const resourceField = one(rm.bytes, 1);
    const resource = resourceField ? protoAttributes(all(resourceField.bytes, 1)) : {};
    return all(rm.bytes, 2).flatMap((sm) =>
      all(sm.bytes, 2).map((m) => {
        const data = one(m.bytes, 7) ?? one(m.bytes, 5);
        return {
          name: text(one(m.bytes, 1)),
          resource,
          points: data ? all(data.bytes, 1).map((p) => protoPoint(p.bytes)) : [],
        };
      }),
    );
  });
}

// ------------------------------------------------------------------------------------------ JSON encoding

interface JsonKeyValue {
  key: string;
  value: { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number };
}

function jsonAttributes(kvs: JsonKeyValue[] | undefined): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const { key, value } of kvs ?? []) {
    out[key] =
      value.stringValue ??
      value.boolValue ??
      (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
      value.doubleValue ??
      null;
  }
  return out;
}

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: JsonKeyValue[];
  status?: { code?: number };
}

function jsonSpans(body: {
  resourceSpans?: { resource?: { attributes?: JsonKeyValue[] }; scopeSpans?: { spans?: JsonSpan[] }[] }[];
}): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((rs) => {
    const resource = jsonAttributes(rs.resource?.attributes);
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: s.traceId.toLowerCase(),
        spanId: s.spanId.toLowerCase(),
        parentSpanId: (s.parentSpanId ?? "").toLowerCase(),
        name: s.name,
        kind: s.kind,
        attributes: jsonAttributes(s.attributes),
        statusCode: s.status?.code ?? 0,
        resource,
      })),
    );
  });
}

interface JsonPoint {
  attributes?: JsonKeyValue[];
  asInt?: string | number;
  asDouble?: number;
}

function jsonMetrics(body: {
  resourceMetrics?: {
    resource?: { attributes?: JsonKeyValue[] };
    scopeMetrics?: {
      metrics?: { name: string; sum?: { dataPoints?: JsonPoint[] }; gauge?: { dataPoints?: JsonPoint[] } }[];
    }[];
  }[];
}): ReceivedMetric[] {
  return (body.resourceMetrics ?? []).flatMap((rm) => {
    const resource = jsonAttributes(rm.resource?.attributes);
    return (rm.scopeMetrics ?? []).flatMap((sm) =>
      (sm.metrics ?? []).map((m) => ({
        name: m.name,
        resource,
        points:
          (m.sum ?? m.gauge)?.dataPoints?.map((p) => ({
            attributes: jsonAttributes(p.attributes),
            value: Number(p.asInt ?? p.asDouble ?? 0),
          })) ?? [],
      })),
    );
  });
}

// ------------------------------------------------------------------------------------------------ server

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const exports: ReceivedExport[] = [];
  const spans: ReceivedSpan[] = [];
  const metrics: ReceivedMetric[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body: Uint8Array = Buffer.concat(chunks);
      if (req.headers["content-encoding"] === "gzip") body = gunzipSync(body);
      const contentType = (req.headers["content-type"] ?? "").split(";")[0]!.trim();
      const json = contentType === "application/json";
      const path = req.url ?? "";
      try {
        if (req.method !== "POST" || (path !== "/v1/traces" && path !== "/v1/metrics")) {
          res.writeHead(404).end();
          return;
        }
        if (!json && contentType !== "application/x-protobuf") {
          res.writeHead(415).end();
          return;
        }
        exports.push({ path, contentType, headers: req.headers });
        const parsed = json ? JSON.parse(Buffer.from(body).toString("utf8")) : null;
        if (path === "/v1/traces") spans.push(...(json ? jsonSpans(parsed) : protoSpans(body)));
        else metrics.push(...(json ? jsonMetrics(parsed) : protoMetrics(body)));
        // An empty Export*ServiceResponse: full success.
        if (json) res.writeHead(200, { "content-type": "application/json" }).end("{}");
        else res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
      } catch (e) {
        res.writeHead(400, { "content-type": "text/plain" }).end(String(e));
      }
      for (const w of [...waiters]) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const receiver: OtlpReceiver = {
    endpoint: `http://127.0.0.1:${port}`,
    exports,
    spans,
    metrics,
    waitFor(predicate, timeoutMs = PATIENCE_MS) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!predicate(receiver)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `the OTLP receiver did not get what was expected in ${timeoutMs} ms; spans: ${JSON.stringify(spans.map((s) => s.name))}, metrics: ${JSON.stringify([...new Set(metrics.map((m) => m.name))])}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}
