import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { NAME_LISTS } from '../../common/http/openapi-schemas';
import { IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import { ROLE_NAME, RoleNameField } from './role-name.field';
const PERMISSIONS_EXAMPLE = { configs: ['read'], data: ['read', 'create', 'export'], stats: ['read'] };

export class CreateRoleDto {
  @ApiProperty({ example: 'auditor', pattern: ROLE_NAME.source })
  @RoleNameField()
  name: string;
  @ApiPropertyOptional({ example: 'Reads every submission' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string;

  @ApiProperty({
    ...NAME_LISTS,
    description: 'resource → actions; "*" grants every resource or action',
    example: PERMISSIONS_EXAMPLE,
  })
  @IsObject()
  permissions: Record<string, string[]>;
}

export class UpdateRoleDto {
  @ApiPropertyOptional({
    pattern: ROLE_NAME.source,
    description: 'Renaming is refused for system roles and roles in use',
  })
  @IsOptional()
  @RoleNameField()
  name?: string;

  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(500) description?: string;

  @ApiPropertyOptional({ ...NAME_LISTS, example: PERMISSIONS_EXAMPLE })
  @IsOptional()
  @IsObject()
  permissions?: Record<string, string[]>;
}

export class RoleResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'manager' }) name: string;
  @ApiProperty() description: string;
  @ApiProperty({ ...NAME_LISTS, example: PERMISSIONS_EXAMPLE }) permissions: Record<string, string[]>;
  @ApiProperty() isSystem: boolean;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class RoleListDto {
  @ApiProperty({ type: [RoleResponseDto] }) data: RoleResponseDto[];
  @ApiProperty({ example: 3 }) totalCount: number;
}
