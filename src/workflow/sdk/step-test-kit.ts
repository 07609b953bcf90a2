import { buildRequestContext, type RequestContext } from '../../common/context/request-context';
import type { EffectSender } from '../effects/effect-sender';
import { mailPayloadProblem } from '../effects/mail-effect.sender';
import { RunState } from '../engine/model/run-state';
import { buildStepContext, EffectBuffer } from '../engine/driver/step-context';
import { stepConfigProblems } from '../engine/model/step-config';
import { renderDeep } from '../engine/model/template';
import { plainToInstance } from 'class-transformer';
import { StepError } from './step-error';
import type { EffectRequest, StepContext, StepSignal } from './step-handler';

/** What a test sets up; everything has a default. */
export interface StepTestOptions {
  /** The execute body's `data` (`{{input.*}}`). */
  input?: Record<string, unknown>;
  /** Earlier steps' results by step name (`{{results.*}}`). */
  results?: Record<string, unknown>;
  /** Scope entries earlier steps provided (`savedData`, `validationResult`, your own names). */
  provided?: Record<string, unknown>;
  user?: { userId: string; email: string; role: string; siteId?: string | null };
  formTitle?: string | null;
  workflow?: { id: string; name: string };
  configId?: string | null;
  step?: { name: string; type: string; index: number };
  attempt?: number;
  /** The caller's context handed to services; by default the `user` above on no site, in English. */
  ctx?: RequestContext;
  /** `{{env.NAME}}` values a template may read (the WORKFLOW_ENV_ALLOWLIST of the test). */
  env?: Record<string, string>;
  /** Effect kinds the step may enqueue beyond the built-in `mail`. */
  effectKinds?: Record<string, Pick<EffectSender, 'payloadProblem'>>;
  signal?: AbortSignal;
  /** A step that paused its run, run again: the decision or deadline that resumed it. */
  resumedWith?: StepSignal | null;
}

/** A StepContext as the engine builds it, plus what the step did to the run. */
export interface StepTestContext extends StepContext {
  /** The effects the step enqueued (in the engine they go to the outbox when the run commits). */
  readonly enqueued: EffectRequest[];
  /** The run state behind the context (its scope is what `read` and `render` see). */
  readonly state: RunState;
  /**
   * A step's config as the engine hands it to `execute`: every string rendered against this
   * context's scope (but the `rawFields`), then checked against the config class (an invalid one
   * throws a `StepError` with code `INVALID_STEP_CONFIG` and `details.validationErrors`).
   */
  renderConfig<C extends object>(
    configClass: new () => C,
    config: Record<string, unknown>,
    options?: { rawFields?: readonly string[] },
  ): C;
}

/**
 * The step test kit: a StepContext built exactly as the engine builds one (the real template
 * renderer, the real run state, the real effect checks), without a database or a server, for
 * testing a step handler in isolation: `await new MyStep(...).execute(createStepTestContext({input}), config)`.
 */
export function createStepTestContext(options: StepTestOptions = {}): StepTestContext {
  const user = options.user ?? { userId: 'user-1', email: 'user@example.com', role: 'user' };
  const workflow = options.workflow ?? { id: 'workflow-1', name: 'Test workflow' };
  const state = RunState.fresh(
    {
      actor: { userId: user.userId, email: user.email, role: user.role, siteId: user.siteId ?? null },
      formTitle: options.formTitle ?? 'Test form',
      data: options.input ?? {},
    },
    workflow.name,
    Date.now(),
  );
  Object.assign(state.scope.results, options.results ?? {});
  state.provide(options.provided);
  const kinds: Record<string, Pick<EffectSender, 'payloadProblem'>> = {
    mail: { payloadProblem: mailPayloadProblem },
    ...options.effectKinds,
  };
  const effects = new EffectBuffer((kind) => kinds[kind] as EffectSender | undefined);
  const ctx =
    options.ctx ??
    buildRequestContext({
      user: { userId: user.userId, email: user.email, role: user.role, siteId: user.siteId ?? null },
      siteId: null,
      locale: 'en',
      requestId: 'step-test',
    });
  const env = options.env ?? {};
  const templateEnv = { allowlist: new Set(Object.keys(env)), values: env };
  const renderConfig = <C extends object>(
    configClass: new () => C,
    config: Record<string, unknown>,
    render: { rawFields?: readonly string[] } = {},
  ): C => {
    const rendered = renderDeep(config, state.templateScope(), templateEnv, new Set(render.rawFields ?? []));
    const validationErrors = stepConfigProblems(configClass, rendered, 'config');
    if (validationErrors.length > 0)
      throw StepError.fatal('INVALID_STEP_CONFIG', 'The rendered config is not valid', {
        details: { validationErrors },
      });
    return plainToInstance(configClass, rendered);
  };
  const context = buildStepContext({
    ctx,
    runId: 'run-1',
    workflow,
    configId: options.configId ?? null,
    step: options.step ?? { name: 'step', type: 'test', index: 0 },
    attempt: options.attempt ?? 1,
    state,
    env: templateEnv,
    effects,
    signal: options.signal ?? new AbortController().signal,
    resumedWith: options.resumedWith ?? null,
  });
  return Object.assign(context, { enqueued: effects.requested, state, renderConfig });
}
