import type { RequestContext } from '../../../common/context/request-context';
import { RecordsService } from '../../../data/records.service';
import {
  type CompensationOutcome,
  type FormAccessNeed,
  type StepContext,
  type StepOutcome,
  type WorkflowStepHandler,
  WorkflowStep,
} from '../../sdk';
import { carriedWriteOf } from '../../sdk/run-write-handle';
import { readSourceObject } from '../source-path';
import { SaveStepConfig } from './save-step.config';

export interface SaveStepResult {
  dataId: string;
  configId: string;
}

/**
 * Creates a record through `RecordsService.create`, the operation behind `POST /api/data`: the same
 * `createResults` permission, validation, save limit and site. Rollback deactivates the record.
 */
@WorkflowStep({
  type: 'save',
  config: SaveStepConfig,
  replayable: true,
  // The run's first write rides on the record's insert: one statement and one commit for both.
  carriesRunWrite: true,
  description: 'Creates a data record exactly as POST /api/data/:configId does',
})
export class SaveStep implements WorkflowStepHandler<SaveStepConfig, SaveStepResult> {
  constructor(private readonly records: RecordsService) {}

  /** Checked by the runner before each attempt; `RecordsService.create` checks it again itself. */
  requiredAccess(config: SaveStepConfig, run: { configId: string | null }): FormAccessNeed[] {
    return [{ configId: targetOf(config, run.configId), permission: 'createResults' }];
  }

  async execute(context: StepContext, config: SaveStepConfig): Promise<StepOutcome<SaveStepResult>> {
    const configId = targetOf(config, context.configId);
    const data = readSourceObject(context, config.source);
    const ctx = { ...changeContext(context), ...(config.locale ? { locale: config.locale } : {}) };
    // One record per run and step, even when the step runs again after a crash.
    const saved = await this.records.create(ctx, configId, data, {
      idempotencyKey: `run:${context.runId}:${context.step.name}`,
      // The run's first write, when it is not stored yet: it commits with the record.
      carrying: carriedWriteOf(context.carriedWrite),
    });
    return {
      result: { dataId: saved.dataId, configId },
      provides: {
        savedData: saved.data as unknown as Record<string, unknown>,
        computedResults: saved.computedResults,
      },
    };
  }

  async compensate(
    context: StepContext,
    _config: SaveStepConfig,
    result: SaveStepResult,
  ): Promise<CompensationOutcome> {
    const revoked = await this.records.revokeCreatedByRun(
      changeContext(context),
      result.configId,
      result.dataId,
    );
    return revoked
      ? { status: 'compensated', detail: { dataId: result.dataId, isActive: false } }
      : {
          status: 'not_compensable',
          detail: { dataId: result.dataId, reason: 'the record is no longer active' },
        };
  }
}

/** The configuration the record goes into: the step's own, else the execute body's. */
function targetOf(config: SaveStepConfig, runConfigId: string | null): string {
  return config.configId ?? runConfigId ?? '';
}

/** The run's context naming the run and step as the origin of the record's history entry. */
function changeContext(context: StepContext): RequestContext {
  return { ...context.ctx, origin: { kind: 'workflow', runId: context.runId, step: context.step.name } };
}
