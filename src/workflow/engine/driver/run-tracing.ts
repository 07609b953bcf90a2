import {
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Attributes,
  type Link,
  type Span,
} from '@opentelemetry/api';
import { REQUEST_ID_ATTRIBUTE, tracingOn } from '../../../common/telemetry/tracing';

/**
 * The spans of a run: one per drive of the run, one per step, one per attempt, through the
 * OpenTelemetry API only. With tracing off (no SDK started) `inSpan` runs its work with a span that
 * records nothing, without the API's context switch (nine spans per run of four steps).
 */

export const RUN_ATTRIBUTES = {
  runId: 'fdws.workflow.run_id',
  workflowId: 'fdws.workflow.id',
  step: 'fdws.workflow.step',
  stepType: 'fdws.workflow.step_type',
  attempt: 'fdws.workflow.attempt',
  mode: 'fdws.workflow.mode',
  status: 'fdws.workflow.status',
  code: 'fdws.workflow.error_code',
  requestId: REQUEST_ID_ATTRIBUTE,
} as const;

const tracer = trace.getTracer('fdws-workflow');
const NO_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * The W3C `traceparent` of the active span (the request that queues a run), stored with the run so
 * the drive that claims it later links to it; undefined with tracing off.
 */
export function activeTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** A link to the span a stored `traceparent` names; none when there is none or it is malformed. */
function linksTo(traceparent: string | undefined): Link[] {
  if (!traceparent) return [];
  const spanContext = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
  return spanContext && trace.isSpanContextValid(spanContext) ? [{ context: spanContext }] : [];
}

/**
 * Runs `work` inside a new active span, which ends when it settles; a thrown error is recorded on
 * it. `root` starts a new trace (a run claimed from the queue), linked to `linkTo` (the traceparent
 * of the request that queued it); otherwise the span is a child of the active one (the request).
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
  options: { root?: boolean; linkTo?: string } = {},
): Promise<T> {
  if (!tracingOn()) return work(NO_SPAN);
  return tracer.startActiveSpan(
    name,
    { attributes, root: options.root, links: linksTo(options.linkTo) },
    async (span) => {
      try {
        return await work(span);
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** Marks a span as the end of a failed step, attempt or run, with the failure's stable code. */
export function markFailed(span: Span, code: string | undefined): void {
  if (code) span.setAttribute(RUN_ATTRIBUTES.code, code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
}
