import { ApiProperty } from '@nestjs/swagger';

/** An upload as POST /api/data/:configId/attachments answers it. */
export class UploadedAttachmentDto {
  @ApiProperty({ format: 'uuid', description: 'The id to put in the record’s attachment field' })
  attachmentId: string;
  @ApiProperty({ example: 'photo', description: 'The attachment field it was uploaded for' })
  field: string;
  @ApiProperty({ example: 'receipt.png', description: 'The client’s name of the file, as a base name' })
  filename: string;
  @ApiProperty({
    example: 'image/png',
    description: 'Sniffed from the file’s bytes, never taken from the client',
  })
  mediaType: string;
  @ApiProperty({ example: 48213 }) size: number;
  @ApiProperty({ example: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08' })
  sha256: string;
}

/** An attachment of a record, as the record's JSON shows it. */
export class RecordAttachmentDto extends UploadedAttachmentDto {
  @ApiProperty({
    example: '/api/data/7c0e.../1b9d.../attachments/3f2a...',
    description: 'Where to download it (same access as the record)',
  })
  url: string;
}
