import { Body, Controller, Delete, Get, Param, Post, Put, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
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
import {
  ApiConditionalRead,
  ApiConditionalWrite,
  ApiTaggedCreate,
  ConditionalRequests,
} from '../common/http/conditional-requests';
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
  constructor(
    private readonly configs: FormConfigsService,
    private readonly conditional: ConditionalRequests,
  ) {}

  private shown(reply: FastifyReply, config: ConfigResponseDto): ConfigResponseDto {
    return this.conditional.tagged(reply, config.version, config);
  }

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
  @ApiConditionalRead()
  @ApiNotFoundResponse({ description: 'No active configuration with this id on this site' })
  async get(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ConfigResponseDto | undefined> {
    const config = await this.configs.get(ctx, configId);
    return this.conditional.notModified(request, reply, config.version) ? undefined : config;
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
  @ApiTaggedCreate()
  async create(
    @Ctx() ctx: RequestContext,
    @Body() body: CreateConfigDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ConfigResponseDto> {
    return this.shown(reply, await this.configs.create(ctx, body));
  }

  @Put('api/configs/:configId')
  @RequirePermission('configs', 'update')
  @ApiOperation({
    summary: 'Update a configuration (admin, or configs:update); omitted fields keep their value',
    description:
      'The given fields are applied over the version current when it is written: without If-Match, a concurrent ' +
      'update of other fields is kept.',
  })
  @ApiOkResponse({ type: ConfigResponseDto })
  @ApiConditionalWrite()
  async update(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Body() body: UpdateConfigDto,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ConfigResponseDto> {
    const ifMatch = this.conditional.ifMatch(request);
    return this.shown(reply, await this.configs.update(ctx, configId, body, ifMatch));
  }

  @Delete('api/configs/:configId')
  @RequirePermission('configs', 'delete')
  @ApiOperation({
    summary: 'Delete (deactivate) a configuration (admin, or configs:delete); its records are kept',
  })
  @ApiOkResponse({ type: ConfigResponseDto })
  @ApiConditionalWrite()
  async remove(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ConfigResponseDto> {
    const ifMatch = this.conditional.ifMatch(request);
    return this.shown(reply, await this.configs.remove(ctx, configId, ifMatch));
  }
}
