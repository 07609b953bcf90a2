import { Body, Controller, Get, Param, Put, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';

import { Authenticated, Roles } from '../common/auth/auth-decision.decorators';
import { Ctx } from '../common/context/ctx.decorator';
import type { RequestContext } from '../common/context/request-context';
import { PageQueryDto } from '../common/http/list-page';
import { UpdateUserDto, UserListDto, UserResponseDto } from './dto/user.dto';
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
