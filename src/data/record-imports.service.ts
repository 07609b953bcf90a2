import { Injectable } from '@nestjs/common';
import type { SQL } from 'drizzle-orm';
import { requireUser, type RequestContext } from '../common/context/request-context';
import { siteOfNewRecord } from '../common/context/site-scope';
import type { FieldError } from '../common/errors/app-error';
import { EventDispatcher } from '../events/event-dispatcher.service';
import type { ConfigRow } from '../form-configs/form-configs.repository';
import { FormAccessService } from '../permissions/form-access.service';
import { FormValidator } from '../validation/form-validator.service';
import { RecordBulkRepository, type BulkTarget, type InsertOrder } from './record-bulk.repository';

export type { InsertOrder };

/** The form an import writes to and whose records it creates (owner, site). */
export interface ImportTarget extends BulkTarget {
  config: ConfigRow;
}

export type ImportRowCheck =
  { valid: true; computedResults: Record<string, unknown> | null } | { valid: false; refusals: FieldError[] };

/**
 * What the imports module needs of records: who may import into a form (the form permission
 * `importResults`, which admins hold), each row checked exactly as a create checks a body, and the
 * checked rows stored in bulk. The save limit is not applied: it bounds a respondent's own
 * submissions, and an import is the bulk load of a holder of `importResults` (README "Bulk import").
 */
@Injectable()
export class RecordImports {
  constructor(
    private readonly access: FormAccessService,
    private readonly validator: FormValidator,
    private readonly bulk: RecordBulkRepository,
    private readonly events: EventDispatcher,
  ) {}

  /** 404 for a form the caller cannot see (another site's), 403 without `importResults`. */
  async target(ctx: RequestContext, configId: string): Promise<ImportTarget> {
    const { config } = await this.access.require(ctx, configId, 'importResults');
    const user = requireUser(ctx);
    return {
      config,
      configId: config.id,
      configVersion: config.version,
      userId: user.userId,
      siteId: siteOfNewRecord(ctx, config.siteId),
    };
  }

  /** Schema, rules and computed values, as a create: the refusals, or the computed values to store. */
  check(ctx: RequestContext, config: ConfigRow, data: Record<string, unknown>): ImportRowCheck {
    const outcome = this.validator.validate(config, data, ctx.locale);
    if (!outcome.valid) return { valid: false, refusals: outcome.validationErrors };
    const computed = outcome.computedResults;
    const stored = config.preferences.storeComputedResults && Object.keys(computed).length > 0;
    return { valid: true, computedResults: stored ? computed : null };
  }

  /**
   * Stores checked rows (see RecordBulkRepository.insertSelected) as the importer, whose permission
   * is asked again (an import resumed after a crash is held to it as the upload was); `alongside`
   * are the caller's own writes committed with them; `order` places it among the caller's others.
   */
  async store(
    ctx: RequestContext,
    target: BulkTarget,
    source: SQL,
    progress: (inserted: SQL) => SQL,
    alongside: SQL[] = [],
    order?: InsertOrder,
  ): Promise<number> {
    await this.access.require(ctx, target.configId, 'importResults');
    const author = { userId: ctx.user?.userId ?? null, origin: ctx.origin ?? null };
    const inserted = await this.bulk.insertSelected(source, target, author, progress, alongside, order);
    if (inserted > 0) this.events.dispatchSoon();
    return inserted;
  }
}
