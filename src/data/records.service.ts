import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../common/context/request-context';
import { siteScopeOf } from '../common/context/site-scope';
import { AppError } from '../common/errors/app-error';
import { FormConfigsService } from '../form-configs/form-configs.service';
import type { ConfigRow } from '../form-configs/form-configs.repository';
import { requireUser } from '../auth/auth.service';
import { FormValidator } from '../validation/form-validator.service';
import { parsePagingQuery } from './list-query.parser';
import { toRecordResponse, type RecordRow } from './record.mapper';
import { RecordsRepository, type RecordScope } from './records.repository';

export type SubmittedData = Record<string, unknown>;

@Injectable()
export class RecordsService {
  constructor(
    private readonly configs: FormConfigsService,
    private readonly records: RecordsRepository,
    private readonly validator: FormValidator,
  ) {}

  /** The spec's five create rules, in order: 404, 400 validation, 400 save limit, store, return. */
  async create(ctx: RequestContext, configId: string, body: unknown) {
    const user = requireUser(ctx);
    const data = requireObject(body);
    const config = await this.configs.requireVisible(ctx, configId);
    const computedResults = this.validateOrThrow(ctx, config, data);
    const saveLimit = config.preferences.saveLimit ?? null;
    const outcome = await this.records.insertWithinLimit(
      {
        configId: config.id,
        userId: user.userId,
        siteId: config.siteId,
        data,
        computedResults: this.storedComputedResults(config, computedResults),
      },
      saveLimit,
    );
    if ('limitReached' in outcome) {
      throw new AppError('DATA_SAVE_LIMIT_REACHED', {
        messageKey: 'data.saveLimitReached',
        params: { limit: saveLimit },
        // With a single allowed submission that may be edited, the client loads and edits the earlier one.
        details:
          saveLimit === 1 && config.preferences.allowEdit && outcome.existingId
            ? { limit: saveLimit, existingDataId: outcome.existingId }
            : { limit: saveLimit },
      });
    }
    return this.savedResponse(outcome.inserted, computedResults);
  }

  async get(ctx: RequestContext, configId: string, dataId: string) {
    const config = await this.configs.requireVisible(ctx, configId);
    const record = await this.requireReadable(ctx, config, dataId);
    return toRecordResponse(record, true);
  }

  /** Replaces `data`, re-validating and recomputing: the owner when the form allows edits, or an admin. */
  async update(ctx: RequestContext, configId: string, dataId: string, body: unknown) {
    const user = requireUser(ctx);
    const data = requireObject(body);
    const config = await this.configs.requireVisible(ctx, configId);
    const record = await this.requireReadable(ctx, config, dataId);
    if (user.role !== 'admin') {
      if (record.userId !== user.userId)
        throw new AppError('FORBIDDEN', { messageKey: 'data.notAuthorized' });
      if (!config.preferences.allowEdit)
        throw new AppError('FORBIDDEN', { messageKey: 'data.editNotAllowed' });
    }
    const computedResults = this.validateOrThrow(ctx, config, data);
    const updated = await this.records.replaceData(
      record.id,
      data,
      this.storedComputedResults(config, computedResults),
    );
    if (!updated) throw new AppError('RECORD_NOT_FOUND');
    return this.savedResponse(updated, computedResults);
  }

  /** Soft delete: the owner (when the form allows deletion) or an admin; the record is kept, inactive. */
  async remove(ctx: RequestContext, configId: string, dataId: string) {
    const user = requireUser(ctx);
    const config = await this.configs.requireVisible(ctx, configId);
    const record = await this.records.findActive(dataId, this.scopeOf(ctx, config.id, false));
    if (!record) throw new AppError('RECORD_NOT_FOUND');
    if (user.role !== 'admin') {
      if (record.userId !== user.userId)
        throw new AppError('FORBIDDEN', { messageKey: 'data.notAuthorized' });
      if (!config.preferences.allowDelete)
        throw new AppError('FORBIDDEN', { messageKey: 'data.deleteNotAllowed' });
    }
    const deleted = await this.records.deactivate(record.id);
    if (!deleted) throw new AppError('RECORD_NOT_FOUND');
    return toRecordResponse(deleted);
  }

  /** The paging form of the list. */
  async list(ctx: RequestContext, configId: string, query: Record<string, unknown>) {
    const paging = parsePagingQuery(query);
    const config = await this.configs.requireVisible(ctx, configId);
    const { rows, total } = await this.records.listPage(this.scopeOf(ctx, config.id), paging);
    return {
      data: rows.map((row) => toRecordResponse(row)),
      total,
      page: paging.page,
      pages: Math.ceil(total / paging.limit),
    };
  }

  /**
   * Which records of the configuration the caller sees: everyone's with viewAllResults (or as admin),
   * otherwise only their own.
   */
  scopeOf(ctx: RequestContext, configId: string, ownOnlyUnlessAllowed = true): RecordScope {
    const user = requireUser(ctx);
    const seesAll = user.role === 'admin' || ctx.formPermissions?.has('viewAllResults') === true;
    return {
      configId,
      site: siteScopeOf(ctx),
      ownerId: ownOnlyUnlessAllowed && !seesAll ? user.userId : null,
    };
  }

  private async requireReadable(ctx: RequestContext, config: ConfigRow, dataId: string): Promise<RecordRow> {
    const scope = this.scopeOf(ctx, config.id);
    const record = await this.records.findActive(dataId, scope);
    // Someone else's record is a 404 to a user who may see only their own: its existence is not revealed.
    if (!record || (scope.ownerId !== null && record.userId !== scope.ownerId))
      throw new AppError('RECORD_NOT_FOUND');
    return record;
  }

  private validateOrThrow(ctx: RequestContext, config: ConfigRow, data: Record<string, unknown>) {
    const result = this.validator.validate(config, data, ctx.locale);
    if (!result.valid) {
      throw new AppError('DATA_VALIDATION_FAILED', {
        validationErrors: result.validationErrors,
        fieldResults: result.fieldResults,
      });
    }
    return result.computedResults;
  }

  private storedComputedResults(config: ConfigRow, computed: Record<string, unknown>) {
    return config.preferences.storeComputedResults && Object.keys(computed).length > 0 ? computed : null;
  }

  private savedResponse(row: RecordRow, computedResults: Record<string, unknown>) {
    return { success: true as const, dataId: row.id, data: toRecordResponse(row), computedResults };
  }
}

function requireObject(body: unknown): SubmittedData {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new AppError('VALIDATION_FAILED', {
      validationErrors: [
        { field: '$body', rule: 'isObject', message: 'the body must be a JSON object of field values' },
      ],
    });
  }
  return body as SubmittedData;
}
