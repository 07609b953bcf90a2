import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../common/context/request-context';
import { FormAccessService } from '../permissions/form-access.service';
import type { GridPageDto, RecordPageDto } from './dto/record.dto';
import { parseGridLoadOptions } from './grid/grid-load-options';
import { GridQueryService } from './grid/grid-query.service';
import { isGridRequest } from './grid/grid-request';
import { schemaOrderOf } from './record.mapper';
import { and } from 'drizzle-orm';
import { parseConfigVersionFilter } from './list-query.parser';
import { configVersionCondition, listScope, scopeCondition } from './record-selection';
import { RecordsService } from './records.service';

/**
 * Routes a list request to the paging form or the grid-library form (docs/grid-protocol.md section
 * 2), of the active records or, with `deleted=true`, of the trash.
 */
@Injectable()
export class RecordListService {
  constructor(
    private readonly records: RecordsService,
    private readonly access: FormAccessService,
    private readonly grid: GridQueryService,
  ) {}

  async list(
    ctx: RequestContext,
    configId: string,
    query: Record<string, unknown>,
  ): Promise<RecordPageDto | GridPageDto> {
    if (!isGridRequest(query)) return this.records.list(ctx, configId, query);
    const access = await this.access.require(ctx, configId, 'viewOwnResults');
    const options = parseGridLoadOptions(query);
    const scope = and(
      scopeCondition(listScope(ctx, access, query)),
      configVersionCondition(parseConfigVersionFilter(query)),
    )!;
    return this.grid.run(scope, options, schemaOrderOf(access.config.schema));
  }
}
