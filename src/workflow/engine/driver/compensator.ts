import { Injectable } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { EffectRegistry } from '../../effects/effect-registry.service';
import type { RunSession } from './run-session';
import { buildStepContext, EffectBuffer } from './step-context';
import { toStepFailure } from './step-failure';
import { StepRegistry } from '../step-registry.service';
import { renderDeep } from '../model/template';

/**
 * Undoes a run's completed steps in reverse order (rollback, or a cancelled run whose strategy is
 * rollback): a step's `compensate` runs (a failing one is logged `not_compensable` and the others
 * still run); a step without one had its held effects dropped (`compensated`) or, when it had an
 * effect of its own, is `not_compensable`. Every held effect is dropped: none is ever sent.
 */
@Injectable()
export class Compensator {
  constructor(
    private readonly registry: StepRegistry,
    private readonly effects: EffectRegistry,
  ) {}

  async compensate(session: RunSession): Promise<void> {
    const { state, definition } = session;
    for (const done of [...state.checkpoint.completed].reverse()) {
      const step = definition.steps[done.index];
      const registered = this.registry.get(step.type);
      const log = state.logs.find((entry) => entry.name === step.name);
      // A step a re-run reused is the earlier run's work: that run's own rollback would undo it.
      if (!registered || !log || log.status !== 'success' || log.reused) continue;
      const dropped = state.dropEffects(done.index);
      if (session.dryRun) continue;
      if (registered.handler.compensate) {
        const context = buildStepContext({
          ctx: session.ctx,
          runId: session.journal.runId ?? 'dry-run',
          workflow: session.workflow,
          configId: session.request.configId,
          step: { name: step.name, type: step.type, index: done.index },
          attempt: 1,
          state,
          env: session.env,
          // An undoing step asks for no new effect: whatever it enqueues is never sent.
          effects: new EffectBuffer((kind) => this.effects.get(kind)),
          signal: new AbortController().signal,
        });
        const rendered = renderDeep(
          step.config ?? {},
          state.templateScope(),
          session.env,
          session.compiled[done.index].rawFields,
        );
        try {
          const outcome = await registered.handler.compensate(
            context,
            plainToInstance(registered.options.config, rendered),
            done.result,
          );
          log.status = outcome.status;
          log.compensation = outcome.detail ?? null;
          // What an undone step produced (the saved record) is no longer the run's outcome.
          if (outcome.status === 'compensated') state.withdraw(done.provided);
        } catch (error) {
          const failure = toStepFailure(error, session.translate);
          log.status = 'not_compensable';
          log.compensation = { error: { code: failure.code, message: failure.message } };
        }
      } else if (dropped > 0) {
        log.status = 'compensated';
        log.compensation = { effectsDropped: dropped };
      } else if (!registered.options.pure) {
        log.status = 'not_compensable';
      }
    }
    state.dropEffects();
  }
}
