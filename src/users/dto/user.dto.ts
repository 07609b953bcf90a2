import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional } from 'class-validator';
import { RoleNameField } from '../../roles/dto/role-name.field';
import { EmailField, NewPasswordField, PersonNameField } from './user-fields';
import { OptionalIdField } from '../../common/validation/dto-fields';

/** A user created by an admin (the way to add users when REGISTRATION_ENABLED=false). */
export class CreateUserDto {
  @ApiProperty({ example: 'sam@example.com' })
  @EmailField()
  email: string;

  @ApiProperty({ minLength: 8, maxLength: 128, example: 'correct horse battery' })
  @NewPasswordField()
  password: string;

  @ApiProperty({ example: 'Sam Lee', maxLength: 200 })
  @PersonNameField()
  name: string;

  @ApiPropertyOptional({ example: 'user', description: 'Default: user' })
  @IsOptional()
  @RoleNameField()
  role?: string;

  @OptionalIdField('The site the user belongs to; null = none (every site)')
  siteId?: string | null;
}

export class UpdateUserDto {
  @ApiPropertyOptional({ example: 'Sam Smith' })
  @IsOptional()
  @PersonNameField()
  name?: string;

  @ApiPropertyOptional({ example: 'sam.smith@example.com' })
  @IsOptional()
  @EmailField()
  email?: string;

  @ApiPropertyOptional({ example: 'manager', description: 'Admins only' })
  @IsOptional()
  @RoleNameField()
  role?: string;

  @ApiPropertyOptional({
    description: 'Admins only; a deactivated user cannot log in and their tokens stop working',
    example: true,
  })
  @IsOptional()
  @IsBoolean()
  isActive?: boolean;

  @OptionalIdField('Admins only')
  siteId?: string | null;
}

/** The user as the login and register answers name it. */
export class UserSummaryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() email: string;
  @ApiProperty() name: string;
  @ApiProperty({ example: 'user' }) role: string;
}

/** The only shape a user leaves the service in: never the password hash or token version. */
export class UserResponseDto extends UserSummaryDto {
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) siteId: string | null;
  @ApiProperty() isActive: boolean;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class UserListDto {
  @ApiProperty({ type: [UserResponseDto] }) data: UserResponseDto[];
  @ApiProperty({ example: 1 }) totalCount: number;
}
