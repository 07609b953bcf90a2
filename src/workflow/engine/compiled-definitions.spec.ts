import { CompiledDefinitions, type DefinitionSource } from './compiled-definitions';
import type { StepRegistry } from './step-registry.service';

function workflowOf(version: number, steps: unknown[]): DefinitionSource {
  return { id: 'w1', version, config: { steps } };
}

class ConfigOfTest {
  configId?: string;
  nested?: { ids: string[] };
}

describe('CompiledDefinitions', () => {
  const checked: unknown[] = [];
  const registry = {
    get: (type: string) => ({
      options:
        type === 'api'
          ? { rawFields: ['compensate'], freeFields: ['payload'], config: ConfigOfTest }
          : { rawFields: [], config: ConfigOfTest },
    }),
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
      { name: 'c', type: 'api', config: { url: 'https://x.test/', payload: '{{results.shape}}' } },
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

  it('checks once a config whose templates are all unrendered (rawFields) or inside a free field', () => {
    const definitions = new CompiledDefinitions(registry);
    const steps = [
      { name: 'a', type: 'api', config: { url: 'https://x.test/', compensate: { url: '{{result.data}}' } } },
      { name: 'b', type: 'api', config: { url: 'https://x.test/', payload: { id: '{{savedData._id}}' } } },
      {
        name: 'c',
        type: 'api',
        config: { url: 'https://x.test/', payload: { lines: ['{{results.shape}}'] } },
      },
      // The field itself templated may render to anything (a number): checked at each run.
      { name: 'd', type: 'api', config: { url: 'https://x.test/', payload: '{{input.count}}' } },
      { name: 'e', type: 'transform', config: { payload: { id: '{{input.id}}' } } },
    ];
    const compiled = definitions.stepsOf(workflowOf(1, steps));
    expect(compiled.map((step) => step.fixedConfigProblems)).toEqual([[], [], [], null, null]);
    // Checked once is not left unrendered: only a template in a raw field is.
    expect(compiled.map((step) => step.rendered)).toEqual([false, true, true, true, true]);
    expect(checked).toEqual([steps[0].config, steps[1].config, steps[2].config]);
  });

  it('makes the config instance of a config that renders to itself once, frozen, for every run', () => {
    const definitions = new CompiledDefinitions(registry);
    const steps = [
      { name: 'a', type: 'save', config: { configId: 'c1', nested: { ids: ['x'] } } },
      { name: 'b', type: 'api', config: { url: 'https://x.test/', payload: { id: '{{savedData._id}}' } } },
      { name: 'c', type: 'transform', config: { bad: true } },
      { name: 'd', type: 'api', config: { url: 'https://x.test/{{input.id}}' } },
    ];
    const compiled = definitions.stepsOf(workflowOf(1, steps));
    const fixed = compiled[0].fixedConfig as ConfigOfTest;
    expect(fixed).toBeInstanceOf(ConfigOfTest);
    expect(fixed).toEqual({ configId: 'c1', nested: { ids: ['x'] } });
    expect(fixed).not.toBe(steps[0].config);
    expect(
      Object.isFrozen(fixed) && Object.isFrozen(fixed.nested) && Object.isFrozen(fixed.nested!.ids),
    ).toBe(true);
    // Rendered at each run (a template outside the raw fields), a config with problems: none made.
    expect(compiled.slice(1).map((step) => step.fixedConfig)).toEqual([null, null, null]);
    expect(definitions.stepsOf(workflowOf(1, steps))[0].fixedConfig).toBe(fixed);
  });
});
