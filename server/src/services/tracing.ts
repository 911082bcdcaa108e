// OpenTelemetry tracing of relay requests, on when OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set: one
// span per relay request, with child spans for the reservation, each upstream attempt and the settlement, each
// carrying the request id. Spans leave in batches (BatchSpanProcessor) over OTLP/HTTP JSON.
//
// Unset, nothing of OpenTelemetry is loaded (the SDK is imported dynamically here) and the relay's `tracer` is null,
// so the pipeline's `s.trace?.…` calls cost one null check. The provider is this instance's own, never registered
// as the global one: test servers in one process keep their spans apart.
import type { Span, Tracer, Attributes } from '@opentelemetry/api';
import type { AppContext } from '../context.js';

export type TraceAttributes = Record<string, string | number | boolean>;

/** A span of the relay's making: attributes, an error status, an end. */
export interface TraceSpan {
  set(attrs: TraceAttributes): void;
  fail(message: string): void;
  end(): void;
}

/** The span of one relay request, parent of the step spans. */
export interface RequestTrace extends TraceSpan {
  child(name: string, attrs?: TraceAttributes): TraceSpan;
}

export interface RelayTracer {
  request(name: string, requestId: string, attrs?: TraceAttributes): RequestTrace;
  /** exports every ended span now */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export async function startTracing(ctx: AppContext): Promise<RelayTracer | null> {
  const { otlpTracesUrl, serviceName } = ctx.config.observability;
  if (!otlpTracesUrl) return null;
  const [api, sdk, resources, otlp] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  const provider = new sdk.BasicTracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': serviceName, 'service.version': ctx.config.version }),
    spanProcessors: [new sdk.BatchSpanProcessor(new otlp.OTLPTraceExporter({ url: otlpTracesUrl }))],
  });
  const tracer: Tracer = provider.getTracer('ai-gateway');
  const wrap = (span: Span): TraceSpan => ({
    set: (attrs) => span.setAttributes(attrs as Attributes),
    fail: (message) => span.setStatus({ code: api.SpanStatusCode.ERROR, message }),
    end: () => span.end(),
  });
  ctx.log.info({ url: otlpTracesUrl }, 'OpenTelemetry tracing on');
  return {
    request(name, requestId, attrs) {
      const root = tracer.startSpan(name, {
        kind: api.SpanKind.SERVER,
        attributes: { 'gateway.request_id': requestId, ...attrs },
      });
      const parent = api.trace.setSpan(api.ROOT_CONTEXT, root);
      return {
        ...wrap(root),
        child: (childName, childAttrs) =>
          wrap(tracer.startSpan(childName, { attributes: { 'gateway.request_id': requestId, ...childAttrs } }, parent)),
      };
    },
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
