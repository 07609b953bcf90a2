import type { CarriedWrite } from '../database/carried-write';
import { Inject, Injectable } from '@nestjs/common';
import { requireUser, type RequestContext } from '../common/context/request-context';
import { ownSiteScopeOf } from '../common/context/site-scope';
import { AppError } from '../common/errors/app-error';
import {
  expectedVersions,
  ifMatchAllows,
  NO_PRECONDITION,
  preconditionFailed,
  type IfMatch,
} from '../common/http/conditional-requests';
import type { ConfigRow } from '../form-configs/form-configs.repository';
import { EventDispatcher } from '../events/event-dispatcher.service';
import { FormAccessService, type FormAccess } from '../permissions/form-access.service';
import { FormValidator } from '../validation/form-validator.service';
import type { RecordDto, RecordPageDto, SavedRecordDto } from './dto/record.dto';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { listBoundsOf, listTooLarge } from './list-bounds';
import { parsePagingQuery } from './list-query.parser';
import { mergeFields } from './record-changes';
import {
  orderedData,
  schemaOrderOf,
  toRecordResponse,
  type ListedRecordRow,
  type RecordRow,
} from './record.mapper';
import { newRecordOf } from './new-record';
import { anyStatus, hiddenDraft, listScope, recordScope, type RecordScope } from './record-selection';
import { RecordsRepository, type RecordWrite } from './records.repository';
import { RecordHistoryRepository } from './history/record-history.repository';
import { AttachmentsService } from '../attachments/attachments.service';

export type { SubmittedData } from './record-rules';

import {
  authorOf,
  assertVisible,
  assertOwnerMayChange,
  validationFailed,
  requireObject,
  saveLimitReached,
  storedComputedResults,
} from './record-rules';

@Injectable()
export class RecordsService {
  constructor(
    private readonly access: FormAccessService,
    private readonly records: RecordsRepository,
    private readonly history: RecordHistoryRepository,
    private readonly validator: FormValidator,
    private readonly events: EventDispatcher,
    private readonly attachments: AttachmentsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The spec's five create rules, in order: 404, 400 validation, 400 save limit, store, return.
   * Checks `createResults` itself, so a workflow step calling it is held to the route's rule.
   * `carrying`: a write of the caller's that commits with the insert (a workflow run's first write).
   */
  async create(
    ctx: RequestContext,
    configId: string,
    body: unknown,
    options: { idempotencyKey?: string; carrying?: CarriedWrite | null } = {},
  ): Promise<SavedRecordDto> {
    const { config } = await this.access.require(ctx, configId, 'createResults');
    const user = requireUser(ctx);
    const data = requireObject(body);
    const validation = this.validator.validate(config, data, ctx.locale);
    if (!validation.valid) {
      // A replayed workflow step whose form has changed since it saved still gets its record.
      const earlier = options.idempotencyKey
        ? await this.records.findByIdempotencyKey(options.idempotencyKey)
        : null;
      if (earlier) return this.savedResponse(config, earlier, earlier.computedResults ?? {});
      throw validationFailed(validation);
    }
    const { computedResults } = validation;
    const saveLimit = config.preferences.saveLimit ?? null;
    const outcome = await this.records.insertWithinLimit(
      newRecordOf(ctx, config, user.userId, data, {
        computedResults: storedComputedResults(config, computedResults),
        idempotencyKey: options.idempotencyKey ?? null,
      }),
      saveLimit,
      authorOf(ctx),
      options.carrying ?? null,
      this.attachments.linkerFor(ctx, config),
    );
    // A replayed workflow step (its process died after the insert) gets the record it saved.
    if ('existing' in outcome) return this.savedResponse(config, outcome.existing, computedResults);
    if ('inserted' in outcome) this.events.dispatchSoon();
    if ('limitReached' in outcome) throw saveLimitReached(config, outcome.existingId);
    return this.withAttachments(config, this.savedResponse(config, outcome.inserted, computedResults));
  }

  async get(ctx: RequestContext, configId: string, dataId: string): Promise<RecordDto> {
    const access = await this.access.require(ctx, configId, 'viewOwnResults');
    const record = await this.requireReadable(ctx, access, dataId);
    const shown = toRecordResponse(record, {
      withWorkflow: true,
      schemaOrder: schemaOrderOf(access.config.schema),
    });
    return { ...shown, ...(await this.attachmentsOf(access.config, record.id)) };
  }

  /**
   * Replaces `data`, re-validating and recomputing: the owner when the form allows edits, or an
   * admin. Without If-Match the last write wins (each one is in the history).
   */
  async update(
    ctx: RequestContext,
    configId: string,
    dataId: string,
    body: unknown,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<SavedRecordDto> {
    return this.change(ctx, configId, dataId, body, 'replace', ifMatch);
  }

  /**
   * Merges `body` into the stored `data` (objects merged key by key, other values replaced; new keys
   * after the known ones), then the rules of `update`: owner with allowEdit or admin, re-validation
   * of the whole result, recomputation. The merge is into the version current when it is written
   * (under the row's lock), so concurrent patches of different fields all survive.
   */
  async patch(
    ctx: RequestContext,
    configId: string,
    dataId: string,
    body: unknown,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<SavedRecordDto> {
    return this.change(ctx, configId, dataId, body, 'merge', ifMatch);
  }

  private async change(
    ctx: RequestContext,
    configId: string,
    dataId: string,
    body: unknown,
    mode: 'replace' | 'merge',
    ifMatch: IfMatch,
  ): Promise<SavedRecordDto> {
    const access = await this.access.require(ctx, configId, 'editOwnResults');
    const { config } = access;
    const submitted = requireObject(body);
    const scope = anyStatus(recordScope(ctx, access, { owners: 'ownUnlessViewAll' }));
    let computedResults: Record<string, unknown> = {};
    // Runs on the locked row: whatever it decides is based on the version it writes over.
    const decide = (record: RecordRow): RecordWrite | 'stale' => {
      assertVisible(ctx, scope, record);
      // A draft is not a submission yet: the form's allowEdit does not hold it back (its owner's).
      assertOwnerMayChange(requireUser(ctx), record, {
        allowed: record.isDraft || config.preferences.allowEdit,
        refusal: 'data.editNotAllowed',
      });
      if (!ifMatchAllows(ifMatch, record.version)) return 'stale';
      const data =
        mode === 'replace'
          ? submitted
          : mergeFields(orderedData(record, schemaOrderOf(config.schema)), submitted);
      if (record.isDraft) {
        // A draft stays one: its types are checked, its required fields and rules wait for its submit.
        const check = this.validator.validateDraft(config, data, ctx.locale);
        if (!check.valid) throw validationFailed(check);
        return { data, computedResults: null, configVersion: config.version };
      }
      computedResults = this.validateOrThrow(ctx, config, data);
      return {
        data,
        computedResults: storedComputedResults(config, computedResults),
        configVersion: config.version,
      };
    };
    const linker = this.attachments.linkerFor(ctx, config);
    const outcome = await this.records.changeLocked(dataId, scope, decide, authorOf(ctx), linker);
    if (!outcome) throw new AppError('RECORD_NOT_FOUND');
    if ('stale' in outcome) throw await this.staleRecord(outcome.stale, ifMatch);
    this.events.dispatchSoon();
    return this.withAttachments(config, this.savedResponse(config, outcome.changed, computedResults));
  }

  /**
   * Soft delete into the trash: the owner (when the form allows deletion) or an admin; the record
   * is kept, inactive, restorable until RECORD_TRASH_DAYS have passed.
   */
  async remove(
    ctx: RequestContext,
    configId: string,
    dataId: string,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<RecordDto> {
    const access = await this.access.require(ctx, configId, 'deleteOwnResults');
    const scope = anyStatus(recordScope(ctx, access, { owners: 'any' }));
    const record = await this.requireDeletable(ctx, access, scope, dataId, ifMatch);
    const deleted = await this.records.deactivate(record.id, authorOf(ctx), expectedVersions(ifMatch));
    if (!deleted) throw await this.missedWrite(dataId, scope, ifMatch);
    this.events.dispatchSoon();
    return toRecordResponse(deleted, { schemaOrder: schemaOrderOf(access.config.schema) });
  }

  /**
   * The paging form of the list: everyone's records with viewAllResults (or as admin), else the
   * caller's; with `deleted=true` the trash (listScope).
   */
  async list(ctx: RequestContext, configId: string, query: Record<string, unknown>): Promise<RecordPageDto> {
    const access = await this.access.require(ctx, configId, 'viewOwnResults');
    const scope = listScope(ctx, access, query);
    const bounds = listBoundsOf(this.config);
    const paging = parsePagingQuery(query, bounds.maxRows);
    const { rows, total, tooLarge } = await this.records.listPage(scope, paging, bounds.maxBytes);
    if (tooLarge) throw listTooLarge(bounds);
    const schemaOrder = schemaOrderOf(access.config.schema);
    return {
      data: rows.map((row) => toRecordResponse(row, { schemaOrder })),
      total,
      page: paging.page,
      pages: Math.ceil(total / paging.limit),
    };
  }

  /**
   * Brings a record back from the trash, with the rule of the delete (the owner when the form
   * allows deletion, or an admin); 404 when it is not in the trash (never deleted, or purged), 409
   * when its owner's active records already fill the form's save limit.
   */
  async restore(
    ctx: RequestContext,
    configId: string,
    dataId: string,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<RecordDto> {
    const access = await this.access.require(ctx, configId, 'deleteOwnResults');
    const scope: RecordScope = { ...recordScope(ctx, access, { owners: 'any' }), state: 'deleted' };
    const record = await this.requireDeletable(ctx, access, scope, dataId, ifMatch);
    // A draft comes back a draft, which counts against no limit.
    const saveLimit = record.isDraft ? null : (access.config.preferences.saveLimit ?? null);
    const outcome = await this.records.restoreWithinLimit(
      record,
      saveLimit,
      authorOf(ctx),
      expectedVersions(ifMatch),
    );
    if (!outcome) throw await this.missedWrite(dataId, scope, ifMatch);
    if ('limitReached' in outcome)
      throw new AppError('DATA_RESTORE_LIMIT_REACHED', {
        params: { limit: saveLimit },
        details: { limit: saveLimit },
      });
    this.events.dispatchSoon();
    return toRecordResponse(outcome.restored, { schemaOrder: schemaOrderOf(access.config.schema) });
  }

  /**
   * Undoes a record a workflow run created (rollback): deactivates it whatever the form's
   * `allowDelete`, because the run, not the user, is taking back its own write.
   */
  async revokeCreatedByRun(ctx: RequestContext, configId: string, dataId: string) {
    const user = requireUser(ctx);
    const record = await this.records.findInScope(dataId, {
      configId,
      site: ownSiteScopeOf(ctx),
      ownerId: user.userId,
    });
    if (!record) return null;
    const deleted = await this.records.deactivate(record.id, authorOf(ctx));
    if (deleted) this.events.dispatchSoon();
    return deleted ? toRecordResponse(deleted) : null;
  }

  private async requireReadable(ctx: RequestContext, access: FormAccess, dataId: string): Promise<RecordRow> {
    const scope = anyStatus(recordScope(ctx, access, { owners: 'ownUnlessViewAll' }));
    const record = await this.records.findInScope(dataId, scope);
    if (!record) throw new AppError('RECORD_NOT_FOUND');
    assertVisible(ctx, scope, record);
    return record;
  }

  /**
   * The record a delete or a restore acts on (404, 403 by the delete's rule, 412 off If-Match). A
   * draft is its owner's to discard whatever allowDelete says: no submission is deleted.
   */
  private async requireDeletable(
    ctx: RequestContext,
    access: FormAccess,
    scope: RecordScope,
    dataId: string,
    ifMatch: IfMatch,
  ): Promise<RecordRow> {
    const record = await this.records.findInScope(dataId, scope);
    if (!record || hiddenDraft(ctx, record)) throw new AppError('RECORD_NOT_FOUND');
    assertOwnerMayChange(requireUser(ctx), record, {
      allowed: record.isDraft || access.config.preferences.allowDelete,
      refusal: 'data.deleteNotAllowed',
    });
    if (!ifMatchAllows(ifMatch, record.version)) throw await this.staleRecord(record, ifMatch);
    return record;
  }

  /** 412 for a record not at the If-Match version: its version and the fields changed since. */
  async staleRecord(record: Pick<RecordRow, 'id' | 'version'>, ifMatch: IfMatch): Promise<AppError> {
    const since = Math.max(0, ...(expectedVersions(ifMatch) ?? []).filter((v) => v < record.version));
    const changedFields =
      since > 0 ? await this.history.fieldsChangedInLatest(record.id, record.version - since) : null;
    return preconditionFailed(record.version, { changedFields });
  }

  /**
   * Why a conditional write found no row: the record moved on to another version meanwhile (412),
   * or it is gone from the scope (404).
   */
  private async missedWrite(dataId: string, scope: RecordScope, ifMatch: IfMatch): Promise<AppError> {
    const now = ifMatch.kind === 'versions' ? await this.records.findInScope(dataId, scope) : null;
    return now ? this.staleRecord(now, ifMatch) : new AppError('RECORD_NOT_FOUND');
  }

  private validateOrThrow(ctx: RequestContext, config: ConfigRow, data: Record<string, unknown>) {
    const result = this.validator.validate(config, data, ctx.locale);
    if (!result.valid) throw validationFailed(result);
    return result.computedResults;
  }

  /** `{attachments}` of a record of a form with attachment fields (README "Attachments"), else nothing. */
  private async attachmentsOf(config: ConfigRow, recordId: string) {
    const attachments = await this.attachments.ofRecord(config, recordId);
    return attachments ? { attachments } : {};
  }

  /** The answer of a write: the record as saved, its computed values and its attachments. */
  answerSaved(config: ConfigRow, row: ListedRecordRow, computed: Record<string, unknown>) {
    return this.withAttachments(config, this.savedResponse(config, row, computed));
  }

  private async withAttachments(config: ConfigRow, saved: SavedRecordDto): Promise<SavedRecordDto> {
    return { ...saved, data: { ...saved.data, ...(await this.attachmentsOf(config, saved.dataId)) } };
  }

  private savedResponse(
    config: ConfigRow,
    row: ListedRecordRow,
    computedResults: Record<string, unknown>,
  ): SavedRecordDto {
    return {
      success: true,
      dataId: row.id,
      data: toRecordResponse(row, { schemaOrder: schemaOrderOf(config.schema) }),
      computedResults,
    };
  }
}
