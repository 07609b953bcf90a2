import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, MaxLength } from 'class-validator';

export class DecisionDto {
  @ApiProperty({ example: true, description: 'true approves, false rejects (the step fails)' })
  @IsBoolean()
  approve: boolean;

  @ApiPropertyOptional({ example: 'Looks good', maxLength: 2000 })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  comment?: string;
}
