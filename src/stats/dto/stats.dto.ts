import { ApiProperty } from '@nestjs/swagger';

export class StatsDto {
  @ApiProperty({ example: 120 }) total: number;
  @ApiProperty({ example: 4 }) today: number;
  @ApiProperty({ example: 17 }) thisWeek: number;
  @ApiProperty({ example: [{ userId: '6d1f0c9e-1f51-4a4e-9a55-0d7d2c1b9a11', count: 12 }] })
  byUser: { userId: string | null; count: number }[];
}
