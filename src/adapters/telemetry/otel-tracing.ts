// The Tracing port on the OpenTelemetry SDK (ADR 24): spans of publishes, fan-outs and attempts, their
// W3C traceparents, and the sampler the configuration names. Parents are passed explicitly (the
// publisher's traceparent, the one stored with the event): no context manager, the same on every runtime.
import {
  type Attributes,
  type Context,
  defaultTextMapGetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
} from "@opentelemetry/semantic-conventions";
import type { AttemptSpan, AttemptStart, FanOutSpan, PublishSpan, Tracing } from "../../app/ports/tracing.ts";
import type { SamplerName } from "../../app/telemetry-config.ts";

const propagator = new W3CTraceContextPropagator();

/**
 * The W3C traceparent of a span (also of a non-recording one: an unsampled trace is still propagated,
 * with flags 00). Written directly: the propagator's inject costs a context and a carrier per attempt.
 */
function traceparentOf(span: Span): string {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-0${c.traceFlags & 1}`;
}

/** The context a traceparent names, or the root when it is absent or not a valid one. */
function parentContext(traceparent: string | null | undefined): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
}

/** A refused or failed publish: its domain error's kind (`validation_failed`, `conflict`, ...), or `internal`. */
function failed(span: Span, error: unknown): void {
  const kind = error instanceof Error ? (error as { kind?: unknown }).kind : undefined;
  span.setAttribute(ATTR_ERROR_TYPE, typeof kind === "string" ? kind : "internal");
  span.setStatus({ code: SpanStatusCode.ERROR });
}

export function sampler(name: SamplerName, ratio: number): Sampler {
  switch (name) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(ratio);
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

export function tracingWith(tracer: Tracer): Tracing {
  return {
    publish(eventType, incoming): PublishSpan {
      const span = tracer.startSpan(
        "herald publish",
        { kind: SpanKind.PRODUCER, attributes: { "herald.event.type": eventType } },
        parentContext(incoming),
      );
      const ctx = trace.setSpan(ROOT_CONTEXT, span);
      return {
        fanOut(eventId): FanOutSpan {
          const child = tracer.startSpan(
            "herald fan-out",
            {
              kind: SpanKind.INTERNAL,
              attributes: { "herald.event.id": eventId, "herald.event.type": eventType },
            },
            ctx,
          );
          return {
            traceparent: traceparentOf(child),
            end(outcome) {
              if ("error" in outcome) failed(child, outcome.error);
              else
                child.setAttributes({
                  "herald.fanout.endpoints": outcome.endpoints,
                  "herald.fanout.stored": outcome.stored,
                });
              child.end();
            },
          };
        },
        end(outcome) {
          if ("error" in outcome) failed(span, outcome.error);
          else
            span.setAttributes({
              "herald.event.id": outcome.eventId,
              "herald.fanout.endpoints": outcome.endpoints,
              "herald.event.replayed": outcome.replayed,
            });
          span.end();
        },
      };
    },

    attempt(s: AttemptStart): AttemptSpan {
      const attributes: Attributes = {
        "herald.endpoint.id": s.endpointId,
        "herald.event.id": s.eventId,
        "herald.event.type": s.eventType,
        "herald.delivery.id": s.deliveryId,
        "herald.delivery.attempt": s.attempt,
        "herald.delivery.trigger": s.trigger,
        [ATTR_HTTP_REQUEST_METHOD]: "POST",
        [ATTR_SERVER_ADDRESS]: s.host,
      };
      const span = tracer.startSpan(
        "herald attempt",
        { kind: SpanKind.CLIENT, attributes },
        parentContext(s.parent),
      );
      return {
        traceparent: traceparentOf(span),
        end(r) {
          span.setAttribute("herald.delivery.status", r.status);
          if (r.responseStatus !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, r.responseStatus);
          if (r.durationMs !== null) span.setAttribute("herald.delivery.duration_ms", r.durationMs);
          if (r.nextAttemptAt !== null)
            span.setAttribute("herald.delivery.next_attempt_at", r.nextAttemptAt.toISOString());
          if (r.error !== null) {
            span.setAttribute("herald.delivery.error", r.error);
            span.setAttribute(ATTR_ERROR_TYPE, r.error);
          }
          if (r.status !== "succeeded")
            span.setStatus({ code: SpanStatusCode.ERROR, message: r.error ?? r.status });
          span.end();
        },
      };
    },
  };
}
