import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
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

/**
 * passport-jwt verifies the signature (HS256 only) and expiry; `validate` then checks what a token
 * cannot say by itself (revocation, the user's current state) and gives the caller as stored now.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
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

  async validate(request: FastifyRequest, claims: TokenClaims): Promise<AuthUser> {
    const user = await this.tokens.userOf(claims);
    request.tokenClaims = claims;
    return user;
  }
}
