import { Body, Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
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
import { CreateRoleDto, RoleListDto, RoleResponseDto, UpdateRoleDto } from './dto/role.dto';
import { RolesService } from './roles.service';

@ApiTags('roles')
@Controller('api/roles')
export class RolesController {
  constructor(private readonly roles: RolesService) {}

  @Get()
  @Authenticated()
  @ApiOperation({ summary: 'List roles with their permission maps' })
  @ApiOkResponse({ type: RoleListDto })
  list(@Ctx() ctx: RequestContext): Promise<RoleListDto> {
    return this.roles.list(ctx);
  }

  @Post()
  @Roles('admin')
  @ApiOperation({ summary: 'Create a role (admin)' })
  @ApiCreatedResponse({ type: RoleResponseDto })
  @ApiConflictResponse({ description: 'The name is taken' })
  create(@Ctx() ctx: RequestContext, @Body() body: CreateRoleDto): Promise<RoleResponseDto> {
    return this.roles.create(ctx, body);
  }

  @Put(':roleId')
  @Roles('admin')
  @ApiOperation({ summary: 'Update a role (admin); system roles and roles in use keep their name' })
  @ApiOkResponse({ type: RoleResponseDto })
  update(
    @Ctx() ctx: RequestContext,
    @Param('roleId') roleId: string,
    @Body() body: UpdateRoleDto,
  ): Promise<RoleResponseDto> {
    return this.roles.update(ctx, roleId, body);
  }

  @Delete(':roleId')
  @Roles('admin')
  @ApiOperation({ summary: 'Delete a role (admin); system roles and roles in use cannot be deleted (409)' })
  @ApiOkResponse({ type: RoleResponseDto })
  remove(@Ctx() ctx: RequestContext, @Param('roleId') roleId: string): Promise<RoleResponseDto> {
    return this.roles.remove(ctx, roleId);
  }
}
