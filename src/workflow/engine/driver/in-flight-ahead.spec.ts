import type { WorkflowStepOptions } from '../../sdk/workflow-step.decorator';
import { stepInFlightAhead } from './in-flight-ahead';
import type { StepDefinition, WorkflowDefinition } from '../model/run-model';
import type { StepRegistry } from '../step-registry.service';

// The step types' options as the built-in steps declare them (only what the rule reads).
const OPTIONS: Record<string, Partial<WorkflowStepOptions>> = {
  save: { replayable: true, carriesRunWrite: true },
  transform: { replayable: true, pure: true },
  validate: { replayable: true, pure: true },
  notify: { replayable: true },
  api: { replayable: false },
};
const registry = { get: (type: string) => (OPTIONS[type] ? { options: OPTIONS[type] } : undefined) };

const step = (type: string, extra: Partial<StepDefinition> = {}): StepDefinition => ({
  name: `${type}-${Math.random()}`,
  type,
  ...extra,
});
const ahead = (definition: WorkflowDefinition, index = 0) =>
  stepInFlightAhead(definition, index, registry as unknown as StepRegistry);

describe('stepInFlightAhead: which later step a write may mark in flight', () => {
  it('the call after only pure steps of one attempt', () => {
    expect(ahead({ steps: [step('save'), step('transform'), step('api')] })).toBe(2);
    expect(ahead({ steps: [step('save'), step('transform'), step('validate'), step('api')] })).toBe(3);
    expect(ahead({ steps: [step('save'), step('api')] })).toBe(1);
  });

  it('none when a step between has an effect, may retry, or is unknown', () => {
    expect(ahead({ steps: [step('save'), step('notify'), step('api')] })).toBeNull();
    expect(
      ahead({ steps: [step('save'), step('transform', { retry: { enabled: true } }), step('api')] }),
    ).toBeNull();
    expect(
      ahead({ steps: [step('save'), step('transform'), step('api')], retry: { enabled: true } }),
    ).toBeNull();
    expect(ahead({ steps: [step('save'), step('mystery'), step('api')] })).toBeNull();
    // The carrying step itself may retry: its mark would be stored through the wait.
    expect(
      ahead({ steps: [step('save', { retry: { enabled: true } }), step('transform'), step('api')] }),
    ).toBeNull();
  });

  it('none when the call has a condition, or no call follows', () => {
    expect(ahead({ steps: [step('save'), step('api', { condition: 'input.send' })] })).toBeNull();
    expect(ahead({ steps: [step('save'), step('transform')] })).toBeNull();
    expect(ahead({ steps: [step('save'), step('api'), step('api')] }, 2)).toBeNull();
  });
});
