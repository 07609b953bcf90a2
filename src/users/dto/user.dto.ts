import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsEmail,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Matches,
  MaxLength,
  ValidateIf,
} from 'class-validator';

export class UpdateUserDto {
  @ApiPropertyOptional({ example: 'Jane Doe' })
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' ? value.trim() : value))
  @IsString()
  @Length(1, 200)
  name?: string;

  @ApiPropertyOptional({ example: 'jane@example.com' })
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' ? value.trim().toLowerCase() : value))
  @IsEmail()
  @MaxLength(254)
  email?: string;

  @ApiPropertyOptional({ example: 'manager', description: 'Admins only' })
  @IsOptional()
  @IsString()
  @Matches(/^[a-z][a-z0-9_-]{1,49}$/)
  role?: string;

  @ApiPropertyOptional({
    description: 'Admins only; a deactivated user cannot log in and their tokens stop working',
  })
  @IsOptional()
  @IsBoolean()
  isActive?: boolean;

  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String, description: 'Admins only' })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsUUID()
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
