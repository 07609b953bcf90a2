import { Body, Controller, Delete, Get, Param, Post, Put, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { Authenticated, RequirePermission } from '../common/auth/auth-decision.decorators';
import { FormPermission } from '../permissions/form-permission.decorator';
import { Ctx } from '../common/context/ctx.decorator';
import type { RequestContext } from '../common/context/request-context';
import { FormConfigsService } from './form-configs.service';
import {
  ConfigListDto,
  ConfigResponseDto,
  CreateConfigDto,
  ListConfigsQueryDto,
  UpdateConfigDto,
} from './dto/form-config.dto';

@ApiTags('configurations')
@Controller()
export class FormConfigsController {
  constructor(private readonly configs: FormConfigsService) {}

  @Get('api/configs')
  @Authenticated()
  @ApiOperation({ summary: 'List active configurations visible on this site, filtered by type and tags' })
  @ApiOkResponse({ type: ConfigListDto })
  list(@Ctx() ctx: RequestContext, @Query() query: ListConfigsQueryDto): Promise<ConfigListDto> {
    return this.configs.list(ctx, query);
  }

  @Get(['api/config/:configId', 'api/configs/:configId'])
  @FormPermission('viewForm')
  @ApiOperation({ summary: 'One configuration (served from a per-user cache when CACHE_ENABLED)' })
  @ApiOkResponse({ type: ConfigResponseDto })
  @ApiNotFoundResponse({ description: 'No active configuration with this id on this site' })
  get(@Ctx() ctx: RequestContext, @Param('configId') configId: string): Promise<ConfigResponseDto> {
    return this.configs.get(ctx, configId);
  }

  @Get('api/configs/:configId/openapi.json')
  @FormPermission('viewForm')
  @ApiOperation({
    summary: "The form's own OpenAPI 3.1 document: its record routes, typed by the form's JSON Schema",
    description:
      '`FormData` is the stored schema (2020-12), so a client generated from this document types the fields ' +
      "of a submission; `info.version` is the configuration's `updatedAt`. Same access as reading the configuration.",
  })
  @ApiOkResponse({
    description: 'An OpenAPI 3.1 document',
    schema: { type: 'object', additionalProperties: true },
  })
  @ApiNotFoundResponse({ description: 'No active configuration with this id on this site' })
  openApi(@Ctx() ctx: RequestContext, @Param('configId') configId: string): Promise<Record<string, unknown>> {
    return this.configs.openApiDocument(ctx, configId);
  }

  @Post('api/configs')
  @RequirePermission('configs', 'create')
  @ApiOperation({ summary: 'Create a configuration (admin, or a role granted configs:create)' })
  @ApiCreatedResponse({ type: ConfigResponseDto })
  @ApiUnprocessableEntityResponse({
    description: 'Invalid body, a schema Ajv cannot compile, or a rule that is not JSONLogic',
  })
  create(@Ctx() ctx: RequestContext, @Body() body: CreateConfigDto): Promise<ConfigResponseDto> {
    return this.configs.create(ctx, body);
  }

  @Put('api/configs/:configId')
  @RequirePermission('configs', 'update')
  @ApiOperation({
    summary: 'Update a configuration (admin, or configs:update); omitted fields keep their value',
  })
  @ApiOkResponse({ type: ConfigResponseDto })
  update(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Body() body: UpdateConfigDto,
  ): Promise<ConfigResponseDto> {
    return this.configs.update(ctx, configId, body);
  }

  @Delete('api/configs/:configId')
  @RequirePermission('configs', 'delete')
  @ApiOperation({
    summary: 'Delete (deactivate) a configuration (admin, or configs:delete); its records are kept',
  })
  @ApiOkResponse({ type: ConfigResponseDto })
  remove(@Ctx() ctx: RequestContext, @Param('configId') configId: string): Promise<ConfigResponseDto> {
    return this.configs.remove(ctx, configId);
  }
}
