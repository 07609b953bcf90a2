import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { AppError } from '../common/errors/app-error';
import { requireUser, type RequestContext } from '../common/context/request-context';
import { PasswordHasher } from '../common/security/password-hasher';
import type { UserResponseDto } from '../users/dto/user.dto';
import { toUserResponse } from '../users/user.mapper';
import type { UserRow } from '../users/users.repository';
import { UsersService } from '../users/users.service';
import type { AuthTokenResponseDto } from './dto/auth.dto';
import { TokenService, type TokenClaims } from './token.service';

@Injectable()
export class AuthService {
  constructor(
    private readonly users: UsersService,
    private readonly tokens: TokenService,
    private readonly passwords: PasswordHasher,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A user registered through a site's host belongs to that site. */
  async register(
    ctx: RequestContext,
    input: { email: string; password: string; name: string },
  ): Promise<AuthTokenResponseDto> {
    if (!this.config.registrationEnabled) throw new AppError('REGISTRATION_DISABLED');
    const user = await this.users.createUnlessEmailTaken({
      email: input.email,
      name: input.name,
      passwordHash: await this.passwords.hash(input.password),
      role: 'user',
      siteId: ctx.siteId,
    });
    if (!user) throw new AppError('EMAIL_TAKEN');
    return this.authResult(user);
  }

  async login(
    _ctx: RequestContext,
    input: { email: string; password: string },
  ): Promise<AuthTokenResponseDto> {
    const user = await this.users.findByEmail(input.email);
    // Same work and same answer for an unknown e-mail and a wrong password.
    const valid = await this.passwords.verify(
      user?.passwordHash ?? (await this.passwords.dummy()),
      input.password,
    );
    if (!user || !valid) throw new AppError('INVALID_CREDENTIALS');
    if (!user.isActive) throw new AppError('USER_INACTIVE');
    return this.authResult(user);
  }

  async me(ctx: RequestContext): Promise<UserResponseDto> {
    const user = await this.users.findById(requireUser(ctx).userId);
    if (!user) throw new AppError('TOKEN_INVALID');
    return toUserResponse(user);
  }

  async logout(_ctx: RequestContext, claims: TokenClaims): Promise<{ success: true }> {
    await this.tokens.revoke(claims);
    return { success: true };
  }

  async changePassword(
    ctx: RequestContext,
    input: { currentPassword: string; newPassword: string },
  ): Promise<AuthTokenResponseDto> {
    const userId = requireUser(ctx).userId;
    const user = await this.users.findById(userId);
    if (!user) throw new AppError('TOKEN_INVALID');
    if (!(await this.passwords.verify(user.passwordHash, input.currentPassword))) {
      throw new AppError('CURRENT_PASSWORD_INVALID');
    }
    const updated = await this.users.replacePassword(userId, await this.passwords.hash(input.newPassword));
    if (!updated) throw new AppError('TOKEN_INVALID');
    return this.authResult(updated);
  }

  private async authResult(user: UserRow): Promise<AuthTokenResponseDto> {
    return {
      token: await this.tokens.issue(user),
      user: { id: user.id, email: user.email, name: user.name, role: user.role },
    };
  }
}
