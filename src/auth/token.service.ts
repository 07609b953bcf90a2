import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/validation/is-uuid';
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
    if (!isWellFormed(claims)) throw new AppError('TOKEN_INVALID');
    const session = await this.sessions.get(claims.sub);
    if (!session || !session.isActive || session.tokenVersion !== claims.ver)
      throw new AppError('TOKEN_INVALID');
    if (await this.revocations.isRevoked(claims.jti)) throw new AppError('TOKEN_INVALID');
    return { userId: session.id, role: session.role, email: session.email, siteId: session.siteId };
  }

  /** Claims `userOf` accepted: their `exp` is a real instant, so the revocation can be kept until it. */
  revoke(claims: TokenClaims): Promise<void> {
    return this.revocations.revoke(claims.jti, new Date(claims.exp * 1000));
  }
}

/** The latest instant a JavaScript Date (and so a revocation's expiry) can hold, in seconds. */
const LATEST_DATE_SECONDS = 8.64e12;
/** Longer than any jti this service issues (a UUID); a bound keeps it a valid btree key of the blacklist. */
const JTI_MAX_LENGTH = 255;

/**
 * Claims as this service issues them. A token signed with the key but lacking `exp` would never
 * expire (passport-jwt checks `exp` only when present), and one lacking `iat` has no age; either, or a
 * lifetime no date can hold, is refused, which also keeps logout (which stores the token until its
 * `exp`) from meeting one.
 */
function isWellFormed(claims: TokenClaims): boolean {
  const { sub, jti, iat, exp } = claims;
  return (
    typeof sub === 'string' &&
    isUuid(sub) &&
    typeof jti === 'string' &&
    jti.length > 0 &&
    jti.length <= JTI_MAX_LENGTH &&
    typeof claims.ver === 'number' &&
    typeof iat === 'number' &&
    Number.isFinite(iat) &&
    typeof exp === 'number' &&
    Number.isFinite(exp) &&
    iat <= exp &&
    exp <= LATEST_DATE_SECONDS
  );
}
