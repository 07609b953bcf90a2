import { Inject, Injectable } from '@nestjs/common';
import { requireUser, type RequestContext } from '../../common/context/request-context';
import { AppError, type FieldError } from '../../common/errors/app-error';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { RolePermissions } from '../../roles/role-permissions.service';
import { conditionProblem } from '../engine/model/condition';
import { SecretOrigins } from '../engine/model/secret-origins';
import { StepRegistry } from '../engine/step-registry.service';
import { envNamesIn, hasEnvPlaceholder, stringsOf, templateProblems } from '../engine/model/template';
import type { WorkflowConfigDto } from '../dto/workflow-definition.dto';
import { fixedOriginOf } from '../steps/api/url-template';
import type { WorkflowStepOptions } from '../sdk/workflow-step.decorator';

/** The role permission that lets a definition read `{{env.NAME}}` values at all (admins hold it). */
export const SECRETS_PERMISSION = { resource: 'workflows', action: 'secrets' } as const;

/**
 * Checks what the body's DTO cannot: step names unique, step types registered, each step's config
 * against its type's config class, and every template and condition (paths, env allow-list, where
 * env values may be sent). Problems name the step: `config.steps[2].config.url`. A definition that
 * reads env at all needs the role permission `workflows:secrets` (403 first).
 */
@Injectable()
export class WorkflowDefinitionValidator {
  private readonly envAllowlist: ReadonlySet<string>;
  private readonly secretOrigins: SecretOrigins;

  constructor(
    private readonly registry: StepRegistry,
    private readonly rolePermissions: RolePermissions,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.envAllowlist = new Set(config.workflowEnvAllowlist);
    this.secretOrigins = SecretOrigins.of(config);
  }

  async assertValid(ctx: RequestContext, definition: WorkflowConfigDto): Promise<void> {
    await this.assertMayUseSecrets(ctx, definition);
    const problems: FieldError[] = [];
    const seen = new Set<string>();
    definition.steps.forEach((step, index) => {
      const at = `config.steps[${index}]`;
      if (seen.has(step.name))
        problems.push({
          field: `${at}.name`,
          rule: 'unique',
          message: `the step name "${step.name}" is used twice`,
        });
      seen.add(step.name);
      const registered = this.registry.get(step.type);
      if (!registered) {
        problems.push({
          field: `${at}.type`,
          rule: 'stepType',
          message: `unknown step type "${step.type.slice(0, 100)}"; known: ${this.registry.types().join(', ')}`,
        });
        return;
      }
      problems.push(...this.registry.configProblems(step.type, step.config ?? {}, `${at}.config`));
      for (const [path, text] of stringsOf(step.config ?? {})) {
        for (const message of templateProblems(text, this.envAllowlist))
          problems.push({ field: `${at}.config.${path}`, rule: 'template', message });
      }
      problems.push(...this.secretOriginProblems(step.config ?? {}, registered.options.sends ?? [], at));
      if (step.condition !== undefined) {
        const problem = conditionProblem(step.condition);
        if (problem) problems.push({ field: `${at}.condition`, rule: 'condition', message: problem });
      }
    });
    if (problems.length > 0) throw new AppError('VALIDATION_FAILED', { validationErrors: problems });
  }

  /** A definition reading any `{{env...}}` needs `workflows:secrets` (403 WORKFLOW_SECRETS_FORBIDDEN). */
  private async assertMayUseSecrets(ctx: RequestContext, definition: WorkflowConfigDto): Promise<void> {
    const readsEnv = definition.steps.some((step) =>
      stringsOf(step.config ?? {}).some(([, text]) => hasEnvPlaceholder(text)),
    );
    if (!readsEnv) return;
    const { resource, action } = SECRETS_PERMISSION;
    if (!(await this.rolePermissions.allows(requireUser(ctx).role, resource, action)))
      throw new AppError('WORKFLOW_SECRETS_FORBIDDEN');
  }

  /**
   * For each request the step sends (`sends`) whose URL has a fixed origin (literal text and env
   * values), every env name read in what that request carries must be bound to that origin. A URL
   * whose origin is not fixed yet is checked when the request is sent.
   */
  private secretOriginProblems(
    config: Record<string, unknown>,
    sends: NonNullable<WorkflowStepOptions['sends']>,
    at: string,
  ): FieldError[] {
    const problems: FieldError[] = [];
    const strings = stringsOf(config);
    for (const send of sends) {
      const url = valueAt(config, send.url);
      if (typeof url !== 'string') continue;
      const origin = fixedOriginOf(url, (name) =>
        this.envAllowlist.has(name) ? process.env[name] : undefined,
      );
      if (origin === null) continue;
      const names = new Set(
        strings
          .filter(([path]) => send.carries.some((root) => isUnder(path, root)))
          .flatMap(([, text]) => envNamesIn(text)),
      );
      for (const name of names) {
        if (!this.envAllowlist.has(name) || this.secretOrigins.allows(name, origin)) continue;
        const bound = this.secretOrigins.boundTo(name);
        problems.push({
          field: `${at}.config.${send.url}`,
          rule: 'secretOrigin',
          message: `{{env.${name}}} may not be sent to ${origin}: WORKFLOW_ENV_ORIGINS binds it to ${bound.length > 0 ? bound.join(', ') : 'no origin'}`,
        });
      }
    }
    return problems;
  }
}

/** The value at a dotted config path (`compensate.url`), own properties only. */
function valueAt(config: Record<string, unknown>, path: string): unknown {
  let value: unknown = config;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Whether a `stringsOf` path (`headers.Authorization`, `payload[0]`) lies at or below `root`. */
function isUnder(path: string, root: string): boolean {
  return path === root || path.startsWith(`${root}.`) || path.startsWith(`${root}[`);
}
