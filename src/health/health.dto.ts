import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class HealthDto {
  @ApiProperty({ example: 'ok' }) status: 'ok';
  @ApiPropertyOptional({ enum: ['pglite', 'postgres'], description: 'readiness only' })
  database?: 'pglite' | 'postgres';
}
