import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { NAME_LISTS } from '../../common/http/openapi-schemas';
import { IsObject, IsOptional } from 'class-validator';
import { FORM_PERMISSIONS } from '../form-permission-names';

const EXAMPLE_ROLES = {
  user: ['viewForm', 'createResults', 'viewOwnResults'],
  manager: ['viewAllResults', 'exportResults', 'viewStats'],
};

export class ReplaceFormPermissionsDto {
  @ApiPropertyOptional({
    ...NAME_LISTS,
    description: `role name → permissions (${FORM_PERMISSIONS.join(', ')})`,
    example: EXAMPLE_ROLES,
  })
  @IsOptional()
  @IsObject()
  roles?: Record<string, string[]>;

  @ApiPropertyOptional({
    ...NAME_LISTS,
    description: 'user id → permissions',
    example: { '6d1f0c9e-1f51-4a4e-9a55-0d7d2c1b9a11': ['exportResults'] },
  })
  @IsOptional()
  @IsObject()
  users?: Record<string, string[]>;
}

export class FormPermissionsDto {
  @ApiProperty({ format: 'uuid' }) configId: string;
  @ApiProperty({ ...NAME_LISTS, example: EXAMPLE_ROLES }) roles: Record<string, string[]>;
  @ApiProperty({ ...NAME_LISTS, example: {} }) users: Record<string, string[]>;
  @ApiProperty({ description: 'true when no grants are stored and the defaults apply' }) isDefault: boolean;
}

export class MyFormPermissionsDto {
  @ApiProperty({ format: 'uuid' }) configId: string;
  @ApiProperty({
    enum: FORM_PERMISSIONS,
    isArray: true,
    example: ['viewForm', 'createResults', 'viewOwnResults'],
  })
  permissions: string[];
}
