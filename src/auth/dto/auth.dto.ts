import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';
import { UserSummaryDto } from '../../users/dto/user.dto';
import { EmailField, NewPasswordField, PersonNameField } from '../../users/dto/user-fields';

export class LoginDto {
  @ApiProperty({ example: 'admin@example.com' })
  @EmailField()
  email: string;

  @ApiProperty({ example: 'admin12345' })
  @IsString()
  @Length(1, 128)
  password: string;
}

export class RegisterDto {
  @ApiProperty({ example: 'jane@example.com' })
  @EmailField()
  email: string;

  @ApiProperty({ minLength: 8, maxLength: 128, example: 'correct horse battery' })
  @NewPasswordField()
  password: string;

  @ApiProperty({ example: 'Jane Doe', maxLength: 200 })
  @PersonNameField()
  name: string;
}

export class ChangePasswordDto {
  @ApiProperty({ example: 'admin12345' })
  @IsString()
  @Length(1, 128)
  currentPassword: string;

  @ApiProperty({ minLength: 8, maxLength: 128, example: 'a much longer passphrase' })
  @NewPasswordField()
  newPassword: string;
}

export class AuthTokenResponseDto {
  @ApiProperty({ description: 'Bearer access token (JWT, HS256)' }) token: string;
  @ApiProperty({ type: UserSummaryDto }) user: UserSummaryDto;
}

export class LogoutResponseDto {
  @ApiProperty({ example: true }) success: boolean;
}
