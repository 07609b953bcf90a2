import type { WorkflowRow } from '../workflows.repository';
import { CompiledDefinitions } from './compiled-definitions';
import type { StepRegistry } from './step-registry.service';

function workflowOf(updatedAt: Date, steps: unknown[]): WorkflowRow {
  return { id: 'w1', updatedAt, config: { steps } } as unknown as WorkflowRow;
}

describe('CompiledDefinitions', () => {
  const checked: unknown[] = [];
  const registry = {
    get: (type: string) => ({ options: { rawFields: type === 'api' ? ['compensate'] : [] } }),
    configProblems: (_type: string, config: unknown) => {
      checked.push(config);
      return (config as { bad?: boolean }).bad ? [{ field: 'config.bad', rule: 'x', message: 'bad' }] : [];
    },
  } as unknown as StepRegistry;

  beforeEach(() => (checked.length = 0));

  it('checks a config without templates once per definition version; one with templates is left to each run', () => {
    const definitions = new CompiledDefinitions(registry);
    const steps = [
      { name: 'a', type: 'save', config: { configId: 'c1' } },
      { name: 'b', type: 'api', config: { url: 'https://x.test/{{input.id}}' } },
      { name: 'c', type: 'api', config: { url: 'https://x.test/', compensate: { url: '{{result.data}}' } } },
      { name: 'd', type: 'transform', config: { bad: true } },
    ];
    const first = definitions.stepsOf(workflowOf(new Date(1000), steps));
    expect(first.map((step) => step.fixedConfigProblems)).toEqual([
      [],
      null,
      null,
      [{ field: 'config.bad', rule: 'x', message: 'bad' }],
    ]);
    expect(first[2].rawFields).toEqual(new Set(['compensate']));
    expect(checked).toHaveLength(2);

    expect(definitions.stepsOf(workflowOf(new Date(1000), steps))).toBe(first);
    expect(checked).toHaveLength(2);
    // An update is a new version: compiled (and checked) again.
    expect(definitions.stepsOf(workflowOf(new Date(2000), steps))).not.toBe(first);
    expect(checked).toHaveLength(4);
  });
});
