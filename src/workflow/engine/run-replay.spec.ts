import { AppError } from '../../common/errors/app-error';
import type { RunCheckpoint, StepLog, WorkflowDefinition } from './model/run-model';
import { applySeed, replaySeed, rerunPoint } from './run-replay';
import { RunState } from './model/run-state';

const definition: WorkflowDefinition = {
  steps: [
    { name: 'store', type: 'save' },
    { name: 'check', type: 'validate' },
    { name: 'tell', type: 'api' },
  ],
};
const log = (name: string, status: StepLog['status'], result: unknown = null): StepLog => ({
  name,
  type: 'x',
  status,
  result,
  attempts: 1,
  durationMs: 1,
});
const checkpoint = (completed: RunCheckpoint['completed']): RunCheckpoint => ({
  version: 2,
  scope: { input: {}, results: {} },
  completed,
  effects: [],
  lastFailure: null,
  pendingRetry: null,
  dataId: null,
  startedAt: 0,
});
const codeOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error instanceof AppError ? error.code : error;
  }
  return null;
};

describe('re-run points and the steps taken over', () => {
  it('from: start, a step name, the first failed or interrupted step; else a clear code', () => {
    const logs = [log('store', 'success'), log('check', 'interrupted'), log('tell', 'failed')];
    expect(rerunPoint(definition, 'start', logs)).toBe(0);
    expect(rerunPoint(definition, 'tell', logs)).toBe(2);
    expect(rerunPoint(definition, 'failed', logs)).toBe(1);
    expect(codeOf(() => rerunPoint(definition, 'failed', [log('store', 'success')]))).toBe(
      'WORKFLOW_RERUN_NO_FAILED_STEP',
    );
    expect(codeOf(() => rerunPoint(definition, 'nope', logs))).toBe('WORKFLOW_RERUN_STEP_UNKNOWN');
  });

  it('takes over results and provided values by step name; a skipped step stays skipped', () => {
    const saved = { _id: 'r1', data: { name: 'Ann' } };
    const seed = replaySeed(
      definition,
      null,
      2,
      [log('store', 'success', { dataId: 'r1' }), log('check', 'skipped')],
      checkpoint([
        {
          index: 0,
          name: 'store',
          result: { dataId: 'r1' },
          provided: ['savedData'],
          values: { savedData: saved },
        },
      ]),
    );
    const state = RunState.fresh(
      { actor: { userId: 'u', email: 'e', role: 'user', siteId: null }, formTitle: null, data: {} },
      'w',
      0,
    );
    applySeed(state, seed);
    expect(seed.nextStep).toBe(2);
    expect(state.logs.map((entry) => [entry.name, entry.status, entry.reused])).toEqual([
      ['store', 'success', true],
      ['check', 'skipped', true],
    ]);
    expect(state.scope.results).toEqual({ store: { dataId: 'r1' } });
    expect(state.scope.savedData).toEqual(saved);
    expect(state.checkpoint.dataId).toBe('r1');
    expect(state.checkpoint.completed).toEqual([
      {
        index: 0,
        name: 'store',
        result: { dataId: 'r1' },
        provided: ['savedData'],
        values: { savedData: saved },
      },
    ]);
  });

  it('refuses to take over a step that did not run, was interrupted or rolled back, or kept no result', () => {
    const seed = (logs: StepLog[], completed: RunCheckpoint['completed'] = []) =>
      codeOf(() => replaySeed(definition, null, 1, logs, checkpoint(completed)));
    expect(seed([])).toBe('WORKFLOW_RERUN_STEP_NOT_REUSABLE');
    expect(seed([log('store', 'interrupted')])).toBe('WORKFLOW_RERUN_STEP_NOT_REUSABLE');
    expect(
      seed([log('store', 'compensated')], [{ index: 0, name: 'store', result: null, provided: [] }]),
    ).toBe('WORKFLOW_RERUN_STEP_NOT_REUSABLE');
    // A run finished before re-runs existed kept no completed steps.
    expect(seed([log('store', 'success')])).toBe('WORKFLOW_RERUN_STEP_NOT_REUSABLE');
    // A checkpoint written before completed steps had names: matched through the earlier definition.
    expect(
      codeOf(() =>
        replaySeed(
          definition,
          definition,
          1,
          [log('store', 'success')],
          checkpoint([{ index: 0, result: null, provided: [] }]),
        ),
      ),
    ).toBeNull();
  });
});
