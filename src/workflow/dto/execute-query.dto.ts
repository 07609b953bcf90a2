import { CheckedAsSent } from '../../common/http/validation.pipe';
import { ApiHideProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString } from 'class-validator';

@CheckedAsSent()
export class ExecuteQueryDto {
  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description: 'Run validate, transform and conditional; only render the other steps; store nothing',
  })
  @IsOptional()
  @IsIn(['true', 'false'])
  dryRun?: 'true' | 'false';

  @ApiPropertyOptional({ enum: ['en', 'hu'] }) @IsOptional() @IsString() lang?: string;
  @ApiPropertyOptional({ enum: ['en', 'hu'] }) @IsOptional() @IsString() locale?: string;
  @ApiHideProperty() @IsOptional() @IsString() _?: string;
}
