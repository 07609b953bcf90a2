import { Body, Controller, Get, HttpCode, Post, Req } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiOkResponse,
  ApiCreatedResponse,
  ApiTags,
  ApiOperation,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { Authenticated, Public } from '../common/auth/auth-decision.decorators';
import { Ctx } from '../common/context/ctx.decorator';
import type { RequestContext } from '../common/context/request-context';
import { AppError } from '../common/errors/app-error';
import { AuthRateLimit } from '../common/throttling/auth-rate-limit.decorator';
import { AuthService } from './auth.service';
import {
  AuthTokenResponseDto,
  ChangePasswordDto,
  LoginDto,
  LogoutResponseDto,
  RegisterDto,
} from './dto/auth.dto';
import { UserResponseDto } from '../users/dto/user.dto';

/** The spec lists the group both as /auth/... and /api/auth/...; both answer. */
@ApiTags('auth')
@AuthRateLimit()
@Controller(['auth', 'api/auth'])
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Post('register')
  @Public()
  @ApiOperation({ summary: 'Register a new user (role user; belongs to the site of the request host)' })
  @ApiCreatedResponse({ type: AuthTokenResponseDto })
  @ApiConflictResponse({ description: 'The e-mail is already registered' })
  register(@Ctx() ctx: RequestContext, @Body() body: RegisterDto): Promise<AuthTokenResponseDto> {
    return this.auth.register(ctx, body);
  }

  @Post('login')
  @HttpCode(200)
  @Public()
  @ApiOperation({ summary: 'Exchange e-mail and password for an access token' })
  @ApiOkResponse({ type: AuthTokenResponseDto })
  @ApiUnauthorizedResponse({ description: 'Wrong e-mail or password, or a deactivated account' })
  login(@Ctx() ctx: RequestContext, @Body() body: LoginDto): Promise<AuthTokenResponseDto> {
    return this.auth.login(ctx, body);
  }

  @Get('me')
  @Authenticated()
  @ApiOperation({ summary: 'The logged-in user' })
  @ApiOkResponse({ type: UserResponseDto })
  me(@Ctx() ctx: RequestContext): Promise<UserResponseDto> {
    return this.auth.me(ctx);
  }

  @Post('logout')
  @HttpCode(200)
  @Authenticated()
  @ApiOperation({ summary: 'Put the presented token on the blacklist until it expires' })
  @ApiOkResponse({ type: LogoutResponseDto })
  logout(@Ctx() ctx: RequestContext, @Req() request: FastifyRequest): Promise<LogoutResponseDto> {
    if (!request.tokenClaims) throw new AppError('UNAUTHORIZED');
    return this.auth.logout(ctx, request.tokenClaims);
  }

  @Post('change-password')
  @HttpCode(200)
  @Authenticated()
  @ApiOperation({
    summary: 'Change the password; every earlier token stops working and a fresh one is returned',
  })
  @ApiOkResponse({ type: AuthTokenResponseDto })
  changePassword(@Ctx() ctx: RequestContext, @Body() body: ChangePasswordDto): Promise<AuthTokenResponseDto> {
    return this.auth.changePassword(ctx, body);
  }
}
