import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { AppError } from '../common/errors/app-error';
import type { AuthUser } from '../common/context/request-context';
import { UserSessionCache } from '../users/user-session.cache';
import { TokenRevocationStore } from './token-revocation.store';

/** Claims of an access token (HS256). */
export interface TokenClaims {
  sub: string;
  role: string;
  email: string;
  siteId: string | null;
  jti: string;
  /** The user's token version when issued; a password change raises it. */
  ver: number;
  iat: number;
  exp: number;
}

export interface TokenSubject {
  id: string;
  role: string;
  email: string;
  siteId: string | null;
  tokenVersion: number;
}

@Injectable()
export class TokenService {
  constructor(
    private readonly jwt: JwtService,
    private readonly revocations: TokenRevocationStore,
    private readonly sessions: UserSessionCache,
  ) {}

  issue(user: TokenSubject): Promise<string> {
    return this.jwt.signAsync({
      sub: user.id,
      role: user.role,
      email: user.email,
      siteId: user.siteId,
      jti: randomUUID(),
      ver: user.tokenVersion,
    });
  }

  /**
   * The caller of verified claims (signature and expiry checked by passport-jwt): refused (one 401)
   * when malformed, revoked, of an unknown or deactivated user, or older than the last password
   * change. Role and site come from the user as stored now, so a role change applies at once.
   */
  async userOf(claims: TokenClaims): Promise<AuthUser> {
    if (typeof claims.sub !== 'string' || typeof claims.jti !== 'string') throw new AppError('TOKEN_INVALID');
    const session = await this.sessions.get(claims.sub);
    if (!session || !session.isActive || session.tokenVersion !== claims.ver)
      throw new AppError('TOKEN_INVALID');
    if (await this.revocations.isRevoked(claims.jti)) throw new AppError('TOKEN_INVALID');
    return { userId: session.id, role: session.role, email: session.email, siteId: session.siteId };
  }

  revoke(claims: TokenClaims): Promise<void> {
    return this.revocations.revoke(claims.jti, new Date(claims.exp * 1000));
  }
}
