import { Injectable } from '@nestjs/common';
import { requireUser, type RequestContext } from '../common/context/request-context';
import { AppError } from '../common/errors/app-error';
import { ifMatchAllows, NO_PRECONDITION, type IfMatch } from '../common/http/conditional-requests';
import { EventDispatcher } from '../events/event-dispatcher.service';
import { AttachmentsService } from '../attachments/attachments.service';
import { FormAccessService } from '../permissions/form-access.service';
import { FormValidator } from '../validation/form-validator.service';
import type { SavedRecordDto } from './dto/record.dto';
import { RecordDraftsRepository, type SubmitDecision } from './record-drafts.repository';
import {
  assertOwnerMayChange,
  assertVisible,
  authorOf,
  requireObject,
  saveLimitReached,
  storedComputedResults,
  validationFailed,
} from './record-rules';
import { newRecordOf } from './new-record';
import { anyStatus, recordScope } from './record-selection';
import type { RecordRow } from './record.mapper';
import { RecordsService } from './records.service';

/**
 * Drafts (README "Drafts"): a record saved before it is complete, with its types and shapes
 * checked but not its required fields, rules or computed values; seen by its owner and admins
 * only, counted nowhere until its submit checks it as a create would. Their edits, deletes and
 * restores are the record routes' (RecordsService), which keep a draft a draft.
 */
@Injectable()
export class RecordDraftsService {
  constructor(
    private readonly access: FormAccessService,
    private readonly drafts: RecordDraftsRepository,
    private readonly records: RecordsService,
    private readonly validator: FormValidator,
    private readonly events: EventDispatcher,
    private readonly attachments: AttachmentsService,
  ) {}

  /**
   * `POST /api/data/:configId?status=draft`: stores the body as a draft of the caller's (the
   * permission of a create, `createResults`); 400 DATA_VALIDATION_FAILED only for what no complete
   * record could hold either (a wrong type, an unknown field).
   */
  async save(ctx: RequestContext, configId: string, body: unknown): Promise<SavedRecordDto> {
    const { config } = await this.access.require(ctx, configId, 'createResults');
    const user = requireUser(ctx);
    const data = requireObject(body);
    const check = this.validator.validateDraft(config, data, ctx.locale);
    if (!check.valid) throw validationFailed(check);
    const inserted = await this.drafts.insert(
      newRecordOf(ctx, config, user.userId, data, { computedResults: null, idempotencyKey: null }),
      authorOf(ctx),
      this.attachments.linkerFor(ctx, config),
    );
    this.events.dispatchSoon();
    return this.records.answerSaved(config, inserted, {});
  }

  /**
   * `POST /api/data/:configId/:dataId/submit`: checks the draft exactly as a create checks a body
   * (schema with its required fields, rules, computed values) and the owner's save limit under the
   * create's lock; then the record is submitted (`record.created`, a `submitted` history entry). A
   * refused check leaves the draft as it was: 422 DRAFT_INCOMPLETE with the problems. Its owner
   * (holding createResults) or an admin; someone else's draft is a 404, a submitted record a 409.
   */
  async submit(
    ctx: RequestContext,
    configId: string,
    dataId: string,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<SavedRecordDto> {
    const access = await this.access.require(ctx, configId, 'createResults');
    const { config } = access;
    const scope = anyStatus(recordScope(ctx, access, { owners: 'ownUnlessViewAll' }));
    let computedResults: Record<string, unknown> = {};
    const decide = (record: RecordRow): SubmitDecision => {
      assertVisible(ctx, scope, record);
      assertOwnerMayChange(requireUser(ctx), record, { allowed: true, refusal: 'data.editNotAllowed' });
      if (!record.isDraft) throw new AppError('RECORD_NOT_DRAFT');
      if (!ifMatchAllows(ifMatch, record.version)) return 'stale';
      const check = this.validator.validate(config, record.data, ctx.locale);
      if (!check.valid) {
        throw new AppError('DRAFT_INCOMPLETE', {
          validationErrors: check.validationErrors,
          fieldResults: check.fieldResults,
        });
      }
      computedResults = check.computedResults;
      return {
        computedResults: storedComputedResults(config, computedResults),
        configVersion: config.version,
      };
    };
    const saveLimit = config.preferences.saveLimit ?? null;
    const outcome = await this.drafts.submitLocked(dataId, scope, decide, saveLimit, authorOf(ctx));
    if (!outcome) throw new AppError('RECORD_NOT_FOUND');
    if ('stale' in outcome) throw await this.records.staleRecord(outcome.stale, ifMatch);
    if ('limitReached' in outcome) throw saveLimitReached(config, outcome.existingId);
    this.events.dispatchSoon();
    return this.records.answerSaved(config, outcome.submitted, computedResults);
  }
}
