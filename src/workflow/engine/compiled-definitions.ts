import { Injectable } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import type { FieldError } from '../../common/errors/app-error';
import { deepFreeze } from '../../common/cache/deep-freeze';
import { StepRegistry } from './step-registry.service';
import { parseDefinition } from './model/stored-state';
import { stringsOf } from './model/template';

/** What the runner needs to know of a step that is the same at every run of one definition version. */
export interface CompiledStep {
  /** The paths of the config left unrendered (the step type's `rawFields`). */
  rawFields: ReadonlySet<string>;
  /** Whether the config has templates outside `rawFields`: without any it is the same at every run. */
  rendered: boolean;
  /**
   * A config without any `{{ }}` renders to itself at every run, so it is checked against its type's
   * config class once (its problems, usually none); so is one whose templates are all where
   * rendering cannot change its validity (the type's `rawFields`, inside its `freeFields`). Null
   * for any other config with templates, which is checked after each rendering.
   */
  fixedConfigProblems: FieldError[] | null;
  /**
   * A config that renders to itself and has no problems, as an instance of its type's config class:
   * made once, deep-frozen, since every run of the version gets this one object. Null otherwise (made
   * at each run from the rendered config).
   */
  fixedConfig: object | null;
}

const CACHE_SIZE = 500;

/** Whether the `stringsOf` path `at` is inside the config path `field`. */
function inside(at: string, field: string): boolean {
  return at.startsWith(`${field}.`) || at.startsWith(`${field}[`);
}

function atOrInside(at: string, field: string): boolean {
  return at === field || inside(at, field);
}

/** A definition as a run runs it: its workflow, its version, the stored definition. */
export interface DefinitionSource {
  id: string;
  version: number;
  config: unknown;
}

/**
 * Per definition version (the workflow's id and `version`), what each of its steps needs before it runs, worked
 * out once in this process instead of at every run. Checked again after a restart, so a step type
 * whose config class changed with a deployment judges the stored definitions anew.
 */
@Injectable()
export class CompiledDefinitions {
  private readonly compiled = new Map<string, CompiledStep[]>();

  constructor(private readonly registry: StepRegistry) {}

  stepsOf(workflow: DefinitionSource): CompiledStep[] {
    const key = `${workflow.id}:${workflow.version}`;
    const cached = this.compiled.get(key);
    if (cached) {
      // Refresh the entry's position so the map evicts the least recently used definition.
      this.compiled.delete(key);
      this.compiled.set(key, cached);
      return cached;
    }
    const steps = parseDefinition(workflow.config).steps.map((step) => {
      const options = this.registry.get(step.type)?.options;
      const rawFields = new Set(options?.rawFields ?? []);
      const freeFields = options?.freeFields ?? [];
      // The paths of the strings rendered at each run: those with templates outside the raw fields.
      const rendered = stringsOf(step.config ?? {})
        .filter(([at, text]) => text.includes('{{') && ![...rawFields].some((raw) => atOrInside(at, raw)))
        .map(([at]) => at);
      const validityMayChange = rendered.some((at) => !freeFields.some((free) => inside(at, free)));
      const fixedConfigProblems = validityMayChange
        ? null
        : this.registry.configProblems(step.type, step.config ?? {}, 'config');
      const fixed = options && rendered.length === 0 && fixedConfigProblems?.length === 0;
      return {
        rawFields,
        rendered: rendered.length > 0,
        fixedConfigProblems,
        fixedConfig: fixed ? deepFreeze(plainToInstance(options.config, step.config ?? {})) : null,
      };
    });
    this.compiled.set(key, steps);
    if (this.compiled.size > CACHE_SIZE) this.compiled.delete(this.compiled.keys().next().value!);
    return steps;
  }
}
