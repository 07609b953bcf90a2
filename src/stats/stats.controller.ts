import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { FormPermission } from '../permissions/form-permission.decorator';
import { Ctx } from '../common/context/ctx.decorator';
import type { RequestContext } from '../common/context/request-context';
import { STATUS_QUERY } from '../data/dto/status-query';
import { StatsDto } from './dto/stats.dto';
import { StatsService } from './stats.service';
import { RoutedRead } from '../database/replicas/routed-read.interceptor';

@ApiTags('data')
@Controller('api/data')
export class StatsController {
  constructor(private readonly stats: StatsService) {}

  @Get(':configId/stats')
  @RoutedRead()
  @FormPermission('viewStats')
  @ApiOperation({ summary: 'Statistics of the active records: total, today, this week (Monday), per user' })
  @ApiQuery({
    name: 'tz',
    required: false,
    type: String,
    description: 'IANA time zone of day and week boundaries (default TIMEZONE)',
    example: 'Europe/Budapest',
  })
  @ApiQuery({
    name: 'configVersion',
    required: false,
    type: Number,
    example: 2,
    description: 'Only records last validated against this version of the form',
  })
  @ApiQuery(STATUS_QUERY)
  @ApiOkResponse({ type: StatsDto })
  get(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<StatsDto> {
    return this.stats.forConfig(ctx, configId, query);
  }
}
