import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsOptional, IsString, Length } from 'class-validator';

export class CreateSiteDto {
  @ApiProperty({ example: 'Shop' }) @IsString() @Length(1, 200) name: string;

  @ApiProperty({
    type: [String],
    example: ['shop.example.com', 'www.shop.example.com'],
    description: 'Host names; a port is ignored',
  })
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @Length(1, 260, { each: true })
  domains: string[];

  @ApiPropertyOptional({
    description:
      'false creates the site deactivated: its host matches no site and it is not listed; default true',
  })
  @IsOptional()
  @IsBoolean()
  isActive?: boolean;
}

export class UpdateSiteDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @Length(1, 200) name?: string;

  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @Length(1, 260, { each: true })
  domains?: string[];

  @ApiPropertyOptional({ description: 'false deactivates the site: its host then matches no site' })
  @IsOptional()
  @IsBoolean()
  isActive?: boolean;
}

export class SiteResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: [String] }) domains: string[];
  @ApiProperty() isActive: boolean;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class SiteListDto {
  @ApiProperty({ type: [SiteResponseDto] }) data: SiteResponseDto[];
  @ApiProperty() totalCount: number;
}
