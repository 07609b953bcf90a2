import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IMPORT_FORMATS, IMPORT_MODES } from '../import-options';

export class ImportRefusalDto {
  @ApiProperty({ example: 3, description: 'The data row (1 = the first row after the header)' }) row: number;
  @ApiProperty({ example: 'qty', description: 'The field, or `$row` for a row that is not a JSON object' })
  field: string;
  @ApiProperty({ example: 'type' }) rule: string;
  @ApiProperty({ example: 'must be integer' }) message: string;
}

export class ImportErrorDto {
  @ApiProperty({ example: 'FORBIDDEN' }) code: string;
}

export class ImportDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) configId: string;
  @ApiProperty({
    enum: ['receiving', 'storing', 'done', 'refused', 'cancelled', 'failed'],
    description:
      '`receiving`: the upload is read; `storing`: valid rows are being stored; `done`; `refused`: all-or-nothing ' +
      'with refusals, nothing stored; `cancelled`; `failed` (see `error`)',
  })
  status: string;
  @ApiProperty({ enum: IMPORT_MODES }) mode: string;
  @ApiProperty({ enum: IMPORT_FORMATS }) format: string;
  @ApiProperty({ example: 1000 }) rowsRead: number;
  @ApiProperty({ example: 998 }) rowsStored: number;
  @ApiProperty({ example: 2 }) rowsRefused: number;
  @ApiProperty({ type: [ImportRefusalDto], description: 'The first 1,000 refusals in row order' })
  refusals: ImportRefusalDto[];
  @ApiProperty({ description: 'More refusals than listed: the CSV download has them all' })
  refusalsTruncated: boolean;
  @ApiProperty({ example: '/api/data/imports/3fa85f64-5717-4562-b3fc-2c963f66afa6/refusals' })
  refusalsCsv: string;
  @ApiPropertyOptional({ type: ImportErrorDto, nullable: true }) error: ImportErrorDto | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
  @ApiProperty({ nullable: true, type: String }) finishedAt: string | null;
}
