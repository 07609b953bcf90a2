import { CompiledDefinitions, type DefinitionSource } from './compiled-definitions';
import type { StepRegistry } from './step-registry.service';

function workflowOf(version: number, steps: unknown[]): DefinitionSource {
  return { id: 'w1', version, config: { steps } };
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
    const first = definitions.stepsOf(workflowOf(1, steps));
    expect(first.map((step) => step.fixedConfigProblems)).toEqual([
      [],
      null,
      null,
      [{ field: 'config.bad', rule: 'x', message: 'bad' }],
    ]);
    expect(first[2].rawFields).toEqual(new Set(['compensate']));
    expect(checked).toHaveLength(2);

    expect(definitions.stepsOf(workflowOf(1, steps))).toBe(first);
    expect(checked).toHaveLength(2);
    // An update is a new version: compiled (and checked) again.
    expect(definitions.stepsOf(workflowOf(2, steps))).not.toBe(first);
    expect(checked).toHaveLength(4);
  });
});
