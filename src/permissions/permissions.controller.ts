import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, Roles } from '../common/auth/auth-decision.decorators';
import { Ctx } from '../common/context/ctx.decorator';
import type { RequestContext } from '../common/context/request-context';
import { FormPermissionsDto, MyFormPermissionsDto, ReplaceFormPermissionsDto } from './dto/permissions.dto';
import { FormPermissionsService } from './form-permissions.service';

@ApiTags('permissions')
@Controller('api/permissions')
export class PermissionsController {
  constructor(private readonly permissions: FormPermissionsService) {}

  @Get(':configId/me')
  @Authenticated()
  @ApiOperation({ summary: "The caller's effective permissions on a configuration" })
  @ApiOkResponse({ type: MyFormPermissionsDto })
  mine(@Ctx() ctx: RequestContext, @Param('configId') configId: string): Promise<MyFormPermissionsDto> {
    return this.permissions.mine(ctx, configId);
  }

  @Get(':configId')
  @Roles('admin')
  @ApiOperation({
    summary: 'The form-level grants of a configuration (admin); the defaults when none are stored',
  })
  @ApiOkResponse({ type: FormPermissionsDto })
  get(@Ctx() ctx: RequestContext, @Param('configId') configId: string): Promise<FormPermissionsDto> {
    return this.permissions.get(ctx, configId);
  }

  @Put(':configId')
  @Roles('admin')
  @ApiOperation({ summary: 'Replace the form-level grants of a configuration (admin)' })
  @ApiOkResponse({ type: FormPermissionsDto })
  replace(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Body() body: ReplaceFormPermissionsDto,
  ): Promise<FormPermissionsDto> {
    return this.permissions.replace(ctx, configId, body);
  }
}
