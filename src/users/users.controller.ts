import { Body, Controller, Get, Param, Post, Put, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';

import { Authenticated, Roles } from '../common/auth/auth-decision.decorators';
import { Ctx } from '../common/context/ctx.decorator';
import type { RequestContext } from '../common/context/request-context';
import { PageQueryDto } from '../common/http/list-page';
import { CreateUserDto, UpdateUserDto, UserListDto, UserResponseDto } from './dto/user.dto';
import { UsersService } from './users.service';

@ApiTags('users')
@Controller('api/users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Get()
  @Roles('admin')
  @ApiOperation({ summary: 'List users (admin), oldest first' })
  @ApiOkResponse({ type: UserListDto })
  list(@Ctx() ctx: RequestContext, @Query() query: PageQueryDto): Promise<UserListDto> {
    return this.users.list(ctx, query.page, query.limit);
  }

  @Post()
  @Roles('admin')
  @ApiOperation({
    summary: 'Create a user (admin): any role and site; the way to add users when REGISTRATION_ENABLED=false',
  })
  @ApiCreatedResponse({ type: UserResponseDto })
  @ApiConflictResponse({ description: 'The e-mail is already registered' })
  create(@Ctx() ctx: RequestContext, @Body() body: CreateUserDto): Promise<UserResponseDto> {
    return this.users.create(ctx, body);
  }

  @Get(':userId')
  @Authenticated()
  @ApiOperation({ summary: 'One user (admin, or the user themselves)' })
  @ApiOkResponse({ type: UserResponseDto })
  get(@Ctx() ctx: RequestContext, @Param('userId') userId: string): Promise<UserResponseDto> {
    return this.users.get(ctx, userId);
  }

  @Put(':userId')
  @Authenticated()
  @ApiOperation({ summary: 'Update a user (admin: everything; self: name and e-mail only)' })
  @ApiOkResponse({ type: UserResponseDto })
  @ApiConflictResponse({ description: 'E-mail taken, or the change would leave no active admin' })
  update(
    @Ctx() ctx: RequestContext,
    @Param('userId') userId: string,
    @Body() body: UpdateUserDto,
  ): Promise<UserResponseDto> {
    return this.users.update(ctx, userId, body);
  }
}
