import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { ShortPageQueryDto } from '../../common/http/short-page-query.dto';
import { RUN_STATUSES } from '../engine/model/run-model';

export class RunHistoryQueryDto extends ShortPageQueryDto {}

export class RunListQueryDto extends RunHistoryQueryDto {
  @ApiPropertyOptional({ enum: RUN_STATUSES, example: 'waiting' })
  @IsOptional()
  @IsIn(RUN_STATUSES)
  status?: (typeof RUN_STATUSES)[number];
}
