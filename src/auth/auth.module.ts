import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { RolesModule } from '../roles/roles.module';
import { SitesModule } from '../sites/sites.module';
import { UsersModule } from '../users/users.module';
import { AccessGuard } from './access.guard';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { jwtSigningKey } from './jwt-signing-key';
import { JwtStrategy } from './jwt.strategy';
import { RevokedTokensRepository } from './revoked-tokens.repository';
import { TokenRevocationStore } from './token-revocation.store';
import { TokenService } from './token.service';

@Module({
  imports: [
    UsersModule,
    RolesModule,
    SitesModule,
    PassportModule.register({ session: false }),
    JwtModule.registerAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        secret: jwtSigningKey(config) as unknown as string,
        signOptions: {
          algorithm: 'HS256',
          expiresIn: (/^\d+$/.test(config.jwtExpiresIn)
            ? Number(config.jwtExpiresIn)
            : config.jwtExpiresIn) as any,
        },
      }),
    }),
  ],
  controllers: [AuthController],
  providers: [
    AuthService,
    TokenService,
    TokenRevocationStore,
    RevokedTokensRepository,
    JwtStrategy,
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  exports: [TokenService],
})
export class AuthModule {}
