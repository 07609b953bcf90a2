import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, IsString, Length, MaxLength } from 'class-validator';
import { UserSummaryDto } from '../../users/dto/user.dto';

const normalizeEmail = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim().toLowerCase() : value;

export class LoginDto {
  @ApiProperty({ example: 'admin@example.com' })
  @Transform(normalizeEmail)
  @IsEmail()
  @MaxLength(254)
  email: string;

  @ApiProperty({ example: 'admin12345' })
  @IsString()
  @Length(1, 128)
  password: string;
}

export class RegisterDto {
  @ApiProperty({ example: 'jane@example.com' })
  @Transform(normalizeEmail)
  @IsEmail()
  @MaxLength(254)
  email: string;

  @ApiProperty({ minLength: 8, maxLength: 128, example: 'correct horse battery' })
  @IsString()
  @Length(8, 128)
  password: string;

  @ApiProperty({ example: 'Jane Doe', maxLength: 200 })
  @Transform(({ value }) => (typeof value === 'string' ? value.trim() : value))
  @IsString()
  @Length(1, 200)
  name: string;
}

export class ChangePasswordDto {
  @ApiProperty()
  @IsString()
  @Length(1, 128)
  currentPassword: string;

  @ApiProperty({ minLength: 8, maxLength: 128 })
  @IsString()
  @Length(8, 128)
  newPassword: string;
}

export class AuthTokenResponseDto {
  @ApiProperty({ description: 'Bearer access token (JWT, HS256)' }) token: string;
  @ApiProperty({ type: UserSummaryDto }) user: UserSummaryDto;
}

export class LogoutResponseDto {
  @ApiProperty({ example: true }) success: boolean;
}
