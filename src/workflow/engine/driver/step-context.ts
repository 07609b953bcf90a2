import type { CarriedWrite } from '../../../database/carried-write';
import { runWriteHandle } from '../../sdk/run-write-handle';
import type { RequestContext } from '../../../common/context/request-context';
import type { EffectSender } from '../../effects/effect-sender';
import { StepError } from '../../sdk/step-error';
import type { EffectRequest, StepContext, StepEffects, StepSignal } from '../../sdk/step-handler';
import { parseContextPath, readSegments } from '../model/context-path';
import type { HeldEffect } from '../model/run-model';
import type { RunState } from '../model/run-state';
import { asText, renderTemplate, type TemplateEnv } from '../model/template';

/**
 * The effects one attempt of a step asks for. They reach the run (and later the outbox) only when
 * the attempt succeeds; a kind without a sender or a payload its sender cannot send fails the step.
 */
export class EffectBuffer implements StepEffects {
  readonly requested: EffectRequest[] = [];

  constructor(private readonly senderOf: (kind: string) => EffectSender | undefined) {}

  enqueue(effect: EffectRequest): void {
    const sender = this.senderOf(effect.kind);
    if (!sender)
      throw StepError.fatal(
        'UNKNOWN_EFFECT_KIND',
        `no sender is registered for effects of kind "${effect.kind}"`,
      );
    const problem = sender.payloadProblem(effect.payload);
    if (problem)
      throw StepError.fatal('INVALID_STEP_CONFIG', `the ${effect.kind} effect cannot be sent: ${problem}`);
    this.requested.push({ kind: effect.kind, payload: effect.payload });
  }

  /** The requested effects as the run holds them (keyed by step index and order). */
  held(step: { name: string; index: number }): HeldEffect[] {
    return this.requested.map((effect, seq) => ({ index: step.index, seq, step: step.name, ...effect }));
  }
}

export interface StepContextParts {
  ctx: RequestContext;
  runId: string;
  workflow: { id: string; name: string };
  configId: string | null;
  step: { name: string; type: string; index: number };
  attempt: number;
  state: RunState;
  env: TemplateEnv;
  effects: StepEffects;
  /** The attempt's abort signal; or a function that makes it when the handler first reads it. */
  signal: AbortSignal | (() => AbortSignal);
  /** What resumes a step that paused its run (null otherwise). */
  resumedWith?: StepSignal | null;
  /** The run's first write for the step to carry (see StepContext.carriedWrite). */
  carriedWrite?: CarriedWrite | null;
}

/** The context a handler gets: the run's scope, its template renderer (never code) and its effects. */
export function buildStepContext(parts: StepContextParts): StepContext {
  const { state, env, signal } = parts;
  return {
    ctx: parts.ctx,
    runId: parts.runId,
    workflowId: parts.workflow.id,
    workflowName: parts.workflow.name,
    configId: parts.configId,
    step: parts.step,
    attempt: parts.attempt,
    scope: state.scope,
    get signal() {
      return typeof signal === 'function' ? signal() : signal;
    },
    effects: parts.effects,
    resumedWith: parts.resumedWith ?? null,
    carriedWrite: runWriteHandle(parts.carriedWrite ?? null),
    read: (path) => {
      const parsed = parseContextPath(path);
      if ('problem' in parsed || parsed.segments[0] === 'env') return undefined;
      return readSegments(state.scope, parsed.segments);
    },
    render: (template, options = {}) =>
      asText(renderTemplate(template, state.templateScope(options.extra), env, { escape: options.escape })),
  };
}
