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
import { UserResponseDto } from '../../auth/dto/auth.dto';

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

export class UserListDto {
  @ApiProperty({ type: [UserResponseDto] }) data: UserResponseDto[];
  @ApiProperty({ example: 1 }) totalCount: number;
}
