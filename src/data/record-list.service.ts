import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../common/context/request-context';
import { FormConfigsService } from '../form-configs/form-configs.service';
import { parseGridLoadOptions } from './grid/grid-load-options';
import { GridQueryService } from './grid/grid-query.service';
import { isGridRequest } from './grid/grid-request';
import { scopeCondition } from './records.repository';
import { RecordsService } from './records.service';

/** Routes a list request to the paging form or the grid-library form (GRID-PROTOCOL.md section 2). */
@Injectable()
export class RecordListService {
  constructor(
    private readonly records: RecordsService,
    private readonly configs: FormConfigsService,
    private readonly grid: GridQueryService,
  ) {}

  async list(ctx: RequestContext, configId: string, query: Record<string, unknown>) {
    if (!isGridRequest(query)) return this.records.list(ctx, configId, query);
    const options = parseGridLoadOptions(query);
    const config = await this.configs.requireVisible(ctx, configId);
    return this.grid.run(scopeCondition(this.records.scopeOf(ctx, config.id)), options);
  }
}
