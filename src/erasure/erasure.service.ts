import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { requireAdmin, type RequestContext } from '../common/context/request-context';
import { AppError } from '../common/errors/app-error';
import { parseFieldPath } from '../common/validation/field-path';
import { isUuid } from '../common/validation/is-uuid';
import { RecordErasure } from '../data/record-erasure.service';
import { FormAccessService } from '../permissions/form-access.service';
import { UsersService } from '../users/users.service';
import { RunErasure } from '../workflow/runs/run-erasure.service';
import type { EraseFieldValueDto, ErasureDto, ErasurePageDto } from './dto/erasure.dto';
import { ERASURE_LEASE_MS, ErasureProcessor } from './erasure.processor';
import { ERASURE_STEPS } from './erasure-steps';
import { ErasuresRepository, type ErasureRow, type NewErasure } from './erasures.repository';

/**
 * Erasure of a person's data (admins only; README "Erasure"). Accepting one matches the records
 * and runs at once and stores their ids with the erasure; the erasure is then worked through in the
 * background, step by step (ErasureProcessor). A request repeating a running erasure, or a done one
 * with nothing new to erase, answers that erasure: the same operation, nothing done twice.
 */
@Injectable()
export class ErasureService {
  constructor(
    private readonly erasures: ErasuresRepository,
    private readonly processor: ErasureProcessor,
    private readonly records: RecordErasure,
    private readonly runs: RunErasure,
    private readonly users: UsersService,
    private readonly access: FormAccessService,
  ) {}

  /** Everything of an account: its records, their history's values, its runs, mail, answers; the account is anonymized. */
  async eraseUser(ctx: RequestContext, userId: string): Promise<ErasureDto> {
    const admin = requireAdmin(ctx);
    if (!isUuid(userId)) throw new AppError('USER_NOT_FOUND');
    // No new record or run of theirs from here on (a queued run re-checks its caller's account).
    await this.users.deactivateForErasure(userId);
    const recordIds = await this.records.idsOfUser(userId);
    const runIds = await this.runs.idsOfUser(userId, recordIds);
    return this.accept({
      kind: 'user',
      subject: { userId },
      subjectKey: `user:${userId}`,
      recordIds,
      runIds,
      requestedBy: admin.userId,
    });
  }

  /** The records of a form whose field holds the value, their history's values and the runs on them. */
  async eraseFieldValue(
    ctx: RequestContext,
    configId: string,
    body: EraseFieldValueDto,
  ): Promise<ErasureDto> {
    const admin = requireAdmin(ctx);
    const { config } = await this.access.require(ctx, configId, 'viewAllResults');
    const path = parseFieldPath(body.field);
    // The DTO checked it already; a caller other than the route is held to the same rule.
    if (!path) throw new AppError('VALIDATION_FAILED');
    const recordIds = await this.records.idsWithFieldValue(config.id, path, body.value);
    const runIds = await this.runs.idsWithFieldValue(config.id, path, body.value, recordIds);
    return this.accept({
      kind: 'field',
      subject: { configId: config.id, field: body.field },
      // A digest, never the value: it tells a repeat of the same request from another one.
      subjectKey: `field:${createHash('sha256')
        .update(JSON.stringify([config.id, body.field, body.value]))
        .digest('hex')}`,
      recordIds,
      runIds,
      requestedBy: admin.userId,
    });
  }

  async get(ctx: RequestContext, erasureId: string): Promise<ErasureDto> {
    requireAdmin(ctx);
    const erasure = await this.erasures.findById(erasureId);
    if (!erasure) throw new AppError('ERASURE_NOT_FOUND');
    return toErasureResponse(erasure);
  }

  /** The audit log: every erasure, newest first. */
  async list(ctx: RequestContext, paging: { page?: number; limit?: number }): Promise<ErasurePageDto> {
    requireAdmin(ctx);
    const page = paging.page ?? 1;
    const limit = paging.limit ?? 20;
    const { rows, total } = await this.erasures.page({ page, limit });
    return { data: rows.map(toErasureResponse), total, page, pages: Math.ceil(total / limit) };
  }

  private async accept(erasure: NewErasure): Promise<ErasureDto> {
    const nothingNew = erasure.recordIds.length === 0 && erasure.runIds.length === 0;
    const { row, created } = await this.erasures.insertUnlessRepeated(
      erasure,
      () => nothingNew,
      this.processor.owner,
      ERASURE_LEASE_MS,
    );
    if (created) this.processor.start(row);
    return toErasureResponse(row);
  }
}

function toErasureResponse(row: ErasureRow): ErasureDto {
  return {
    id: row.id,
    kind: row.kind as ErasureDto['kind'],
    subject: row.subject,
    status: row.status as ErasureDto['status'],
    matched: { records: row.recordIds.length, runs: row.runIds.length },
    stepsDone: ERASURE_STEPS.slice(0, row.nextStep),
    counts: row.counts,
    requestedBy: row.requestedBy,
    createdAt: row.createdAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}
