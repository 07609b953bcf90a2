import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  ParseIntPipe,
  Post,
  Put,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { Authenticated, RequirePermission } from '../common/auth/auth-decision.decorators';
import { AppError } from '../common/errors/app-error';
import { FormPermission } from '../permissions/form-permission.decorator';
import { Ctx } from '../common/context/ctx.decorator';
import type { RequestContext } from '../common/context/request-context';
import {
  ApiConditionalRead,
  ApiConditionalWrite,
  ApiTaggedCreate,
  ConditionalRequests,
} from '../common/http/conditional-requests';
import { ShortPageQueryDto } from '../common/http/short-page-query.dto';
import { FormConfigsService } from './form-configs.service';
import { FormConfigVersionsService } from './form-config-versions.service';
import { ConfigVersionDto, ConfigVersionPageDto, FormDocumentQueryDto } from './dto/form-config-version.dto';
import {
  ConfigListDto,
  ConfigResponseDto,
  CreateConfigDto,
  ListConfigsQueryDto,
  UpdateConfigDto,
} from './dto/form-config.dto';
import { RoutedRead } from '../database/replicas/routed-read.interceptor';

/** A version number in a path: a positive integer, else 404 (no such version), like an unknown id. */
const VERSION_NUMBER = new ParseIntPipe({
  exceptionFactory: () => new AppError('CONFIG_VERSION_NOT_FOUND'),
});

@ApiTags('configurations')
@Controller()
export class FormConfigsController {
  constructor(
    private readonly configs: FormConfigsService,
    private readonly versions: FormConfigVersionsService,
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
  @RoutedRead()
  @FormPermission('viewForm')
  @ApiOperation({
    summary: "The form's own OpenAPI 3.1 document: its record routes, typed by the form's JSON Schema",
    description:
      '`FormData` is the stored schema (2020-12), so a client generated from this document types the fields ' +
      "of a submission; `info.version` is the configuration's `updatedAt` (of version `n` with `?version=n`, whose " +
      'fields it then types), `info.x-config-version` the version. Same access as reading the configuration.',
  })
  @ApiOkResponse({
    description: 'An OpenAPI 3.1 document',
    schema: { type: 'object', additionalProperties: true },
  })
  @ApiNotFoundResponse({
    description:
      'No active configuration with this id on this site (CONFIG_NOT_FOUND), or no such version kept',
  })
  openApi(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Query() query: FormDocumentQueryDto,
  ): Promise<Record<string, unknown>> {
    return this.versions.openApiDocument(ctx, configId, query.version);
  }

  @Get('api/configs/:configId/versions')
  @FormPermission('viewForm')
  @ApiOperation({
    summary: "A configuration's kept versions, newest first: number, author, time, the parts that changed",
    description:
      'Every create, update and restore keeps the version it makes, immutable. Same access as reading the ' +
      'configuration.',
  })
  @ApiOkResponse({ type: ConfigVersionPageDto })
  @ApiNotFoundResponse({ description: 'No active configuration with this id on this site' })
  listVersions(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Query() query: ShortPageQueryDto,
  ): Promise<ConfigVersionPageDto> {
    return this.versions.list(ctx, configId, query);
  }

  @Get('api/configs/:configId/versions/:version')
  @FormPermission('viewForm')
  @ApiOperation({ summary: 'One kept version of a configuration, with its content as it was' })
  @ApiOkResponse({ type: ConfigVersionDto })
  @ApiNotFoundResponse({
    description:
      'No active configuration with this id on this site (CONFIG_NOT_FOUND), or no such version kept',
  })
  getVersion(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Param('version', VERSION_NUMBER) version: number,
  ): Promise<ConfigVersionDto> {
    return this.versions.get(ctx, configId, version);
  }

  @Post('api/configs/:configId/versions/:version/restore')
  @RequirePermission('configs', 'update')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: "Make a kept version's content current again, as a new version (admin, or configs:update)",
    description:
      'Its site stays the current one. If-Match names the current version (as for PUT); without it, a ' +
      'concurrent update is overwritten by the restored content (recorded as its own version).',
  })
  @ApiOkResponse({ type: ConfigResponseDto })
  @ApiConditionalWrite()
  @ApiForbiddenResponse({ description: 'FORBIDDEN: no configs:update; SITE_FORBIDDEN: another site' })
  @ApiNotFoundResponse({
    description:
      'No active configuration with this id on this site (CONFIG_NOT_FOUND), or no such version kept',
  })
  async restoreVersion(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Param('version', VERSION_NUMBER) version: number,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ConfigResponseDto> {
    const ifMatch = this.conditional.ifMatch(request);
    return this.shown(reply, await this.versions.restore(ctx, configId, version, ifMatch));
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
