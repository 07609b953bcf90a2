import { Injectable } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { AppError, type FieldError } from '../common/errors/app-error';
import { requireUser, type RequestContext } from '../common/context/request-context';
import { flattenValidationErrors } from '../common/http/validation.pipe';
import type { Locale } from '../common/i18n/locale';
import { Translator } from '../common/i18n/translator.service';
import { CreateConfigDto } from '../form-configs/dto/form-config.dto';
import { FormConfigsService } from '../form-configs/form-configs.service';
import { RolePermissions } from '../roles/role-permissions.service';
import { FormValidator } from '../validation/form-validator.service';
import { CsvSampleError, csvSamples } from './csv-samples';
import type {
  ConfigDraftDto,
  DraftWarningDto,
  GenerateConfigDto,
  GeneratedConfigDto,
  SavedGeneratedConfigDto,
} from './dto/generate-config.dto';
import type { ConfigDraftRequest, DraftWarning } from './providers/config-draft-provider';
import { ConfigDraftProviders } from './providers/config-draft-providers.service';

export type GenerateOutcome =
  { saved: false; answer: GeneratedConfigDto } | { saved: true; answer: SavedGeneratedConfigDto };

const DRAFT_FIELDS = [
  'title',
  'type',
  'tags',
  'description',
  'schema',
  'validationRules',
  'computedRules',
  'preferences',
] as const;

const DEFAULT_PREFERENCES = {
  saveLimit: null,
  allowEdit: true,
  allowDelete: true,
  storeComputedResults: false,
};

/**
 * Configuration drafts from a description and/or sample data, made by the provider `AI_PROVIDER`
 * names. A draft is answered only when `POST /api/configs` would accept it as it stands: the same DTO
 * validation and the same definition check (schema compiles, rules are JSONLogic).
 */
@Injectable()
export class AiConfigService {
  constructor(
    private readonly providers: ConfigDraftProviders,
    private readonly configs: FormConfigsService,
    private readonly validator: FormValidator,
    private readonly rolePermissions: RolePermissions,
    private readonly translator: Translator,
  ) {}

  async generate(ctx: RequestContext, body: GenerateConfigDto): Promise<GenerateOutcome> {
    const user = requireUser(ctx);
    if (!(await this.rolePermissions.allows(user.role, 'configs', 'create'))) throw new AppError('FORBIDDEN');
    const locale = body.locale ?? ctx.locale;
    const warnings: DraftWarning[] = [];
    const samples = this.samplesOf(body.samples, warnings);
    if (!body.prompt && !samples) {
      throw new AppError('VALIDATION_FAILED', {
        validationErrors: [{ field: 'samples', rule: 'required', message: 'send a prompt, samples or both' }],
      });
    }

    const { name, generator } = this.providers.active();
    const base = { prompt: body.prompt, samples, type: body.type, title: body.title, locale };
    const request: ConfigDraftRequest = {
      ...base,
      check: (draft) => this.problemsOf(this.complete(draft, base)),
    };
    const result = await generator.generate(request);
    const draft = this.complete(result.draft, base);
    const problems = this.problemsOf(draft);
    if (problems.length > 0) throw new AppError('AI_INVALID_ANSWER', { validationErrors: problems });

    const answerWarnings = [...warnings, ...result.warnings].map((w) => this.localize(w, locale));
    if (!body.save) {
      return { saved: false, answer: { ...pickDraft(draft), provider: name, warnings: answerWarnings } };
    }
    const saved = await this.configs.create(ctx, plainToInstance(CreateConfigDto, draft));
    return { saved: true, answer: { ...saved, provider: name, warnings: answerWarnings } };
  }

  private samplesOf(
    samples: GenerateConfigDto['samples'],
    warnings: DraftWarning[],
  ): Record<string, unknown>[] | undefined {
    if (samples === undefined) return undefined;
    if (Array.isArray(samples)) return samples.length > 0 ? samples : undefined;
    if (samples.trim() === '') return undefined;
    try {
      const parsed = csvSamples(samples);
      for (const row of parsed.rowsWithExtraCells)
        warnings.push({ code: 'CSV_EXTRA_CELLS', params: { row } });
      return parsed.records;
    } catch (error) {
      if (error instanceof CsvSampleError)
        throw new AppError('VALIDATION_FAILED', { validationErrors: [error.problem] });
      throw error;
    }
  }

  /**
   * The provider's draft with the caller's choices and the defaults of `POST /api/configs` applied.
   * Keys outside a configuration body are kept so that the check reports them; `siteId` and
   * `definition` (the site is the caller's business, the layout the client's) are dropped.
   */
  private complete(draft: unknown, request: Pick<ConfigDraftRequest, 'type' | 'title' | 'locale'>): unknown {
    if (typeof draft !== 'object' || draft === null || Array.isArray(draft)) return draft;
    const { siteId: _siteId, definition: _definition, ...rest } = draft as Record<string, unknown>;
    const preferences = rest.preferences ?? {};
    return {
      ...rest,
      title: request.title ?? rest.title ?? this.translator.translate('ai.defaultTitle', request.locale),
      type: request.type ?? rest.type ?? 'form',
      tags: rest.tags ?? [],
      description: rest.description ?? null,
      schema: rest.schema ?? null,
      validationRules: rest.validationRules ?? [],
      computedRules: rest.computedRules ?? [],
      preferences:
        typeof preferences === 'object' && !Array.isArray(preferences)
          ? { ...DEFAULT_PREFERENCES, ...preferences }
          : preferences,
    };
  }

  /** What `POST /api/configs` would answer with a 422 for this body, or [] when it would accept it. */
  private problemsOf(draft: unknown): FieldError[] {
    if (typeof draft !== 'object' || draft === null || Array.isArray(draft))
      return [{ field: '$root', rule: 'isObject', message: 'the draft must be a JSON object' }];
    const instance = plainToInstance(CreateConfigDto, draft);
    const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true });
    if (errors.length > 0) return flattenValidationErrors(errors);
    try {
      this.validator.assertDefinitionIsValid(instance);
      return [];
    } catch (error) {
      if (error instanceof AppError && error.validationErrors) return error.validationErrors;
      throw error;
    }
  }

  private localize(warning: DraftWarning, locale: Locale): DraftWarningDto {
    return {
      code: warning.code,
      ...(warning.field !== undefined && { field: warning.field }),
      message: warning.message ?? this.translator.translate(`ai.${warning.code}`, locale, warning.params),
    };
  }
}

/** The draft's fields in a stable order (it passed the check, so it holds no others). */
function pickDraft(draft: unknown): ConfigDraftDto {
  const source = draft as Record<string, unknown>;
  return Object.fromEntries(DRAFT_FIELDS.map((field) => [field, source[field]])) as unknown as ConfigDraftDto;
}
