import { createSecretKey } from 'node:crypto';
import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { RolesModule } from '../roles/roles.module';
import { SitesModule } from '../sites/sites.module';
import { UsersModule } from '../users/users.module';
import { AccessGuard } from './access.guard';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { TokenRevocationStore } from './token-revocation.store';
import { TokenService } from './token.service';

@Module({
  imports: [
    UsersModule,
    RolesModule,
    SitesModule,
    JwtModule.registerAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        // A KeyObject, not a string: jsonwebtoken otherwise tries to parse the secret as a public key
        // on every verification, which was a fifth of the CPU time of a request.
        secret: createSecretKey(Buffer.from(config.jwtSecret, 'utf8')) as unknown as string,
        signOptions: {
          algorithm: 'HS256',
          expiresIn: (/^\d+$/.test(config.jwtExpiresIn)
            ? Number(config.jwtExpiresIn)
            : config.jwtExpiresIn) as any,
        },
        verifyOptions: { algorithms: ['HS256'] },
      }),
    }),
  ],
  controllers: [AuthController],
  providers: [AuthService, TokenService, TokenRevocationStore, { provide: APP_GUARD, useClass: AccessGuard }],
  exports: [TokenService],
})
export class AuthModule {}
