import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { Strategy } from 'passport-jwt';
import type { AuthUser } from '../common/context/request-context';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { bearerToken } from './bearer-token';
import { jwtSigningKey } from './jwt-signing-key';
import { TokenService, type TokenClaims } from './token.service';

declare module 'fastify' {
  interface FastifyRequest {
    tokenClaims?: TokenClaims;
  }
}

/** Most verified tokens one process remembers; the least recently used go first. */
const VERIFIED_TOKENS = 10_000;

/**
 * passport-jwt verifies the signature (HS256 only) and expiry; `validate` then checks what a token
 * cannot say by itself (revocation, the user's current state) and gives the caller as stored now.
 *
 * A token is verified once per process: its claims are remembered by its exact text, so the same
 * token on the next request skips the HMAC and the decoding (a few percent of a create's CPU) but
 * not the expiry, nor anything `validate` checks. The key never changes while the process runs,
 * and any other text, a forged token included, is a miss that passport-jwt verifies.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  private readonly verified = new LRUCache<string, TokenClaims>({ max: VERIFIED_TOKENS });

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly tokens: TokenService,
  ) {
    super({
      jwtFromRequest: (request: FastifyRequest) => bearerToken(request),
      // A KeyObject works with jsonwebtoken 9; the typings only name strings and buffers.
      secretOrKey: jwtSigningKey(config) as unknown as string,
      algorithms: ['HS256'],
      passReqToCallback: true,
    });
  }

  // The typings name Express's request; under Fastify it is Fastify's (as in `jwtFromRequest`).
  override authenticate(req: Parameters<Strategy['authenticate']>[0], options?: unknown): void {
    const request = req as unknown as FastifyRequest;
    const token = bearerToken(request);
    const claims = token === null ? undefined : this.verified.get(token);
    if (claims === undefined || claims.exp <= Math.floor(Date.now() / 1000)) {
      super.authenticate(req, options);
      return;
    }
    this.validate(request, claims).then(
      (user) => this.success(user),
      (error: Error) => this.error(error),
    );
  }

  /** Claims whose signature and expiry passport-jwt (or the memo above) has just checked. */
  async validate(request: FastifyRequest, claims: TokenClaims): Promise<AuthUser> {
    const token = bearerToken(request);
    // Frozen: the same claims object now serves every later request with this token.
    if (token !== null && typeof claims.exp === 'number') this.verified.set(token, Object.freeze(claims));
    const user = await this.tokens.userOf(claims);
    request.tokenClaims = claims;
    return user;
  }
}
