import { Body, Controller, Get, Param, Post, Put } from '@nestjs/common';
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
import { CreateSiteDto, SiteListDto, SiteResponseDto, UpdateSiteDto } from './dto/site.dto';
import { SitesService } from './sites.service';

@ApiTags('sites')
@Controller('api/sites')
export class SitesController {
  constructor(private readonly sites: SitesService) {}

  @Get()
  @Authenticated()
  @ApiOperation({ summary: 'List active sites: every one for admins, else only the caller’s own' })
  @ApiOkResponse({ type: SiteListDto })
  list(@Ctx() ctx: RequestContext): Promise<SiteListDto> {
    return this.sites.list(ctx);
  }

  @Post()
  @Roles('admin')
  @ApiOperation({ summary: 'Create a site (admin); the Host header selects it' })
  @ApiCreatedResponse({ type: SiteResponseDto })
  @ApiConflictResponse({ description: 'A domain is used by another active site' })
  create(@Ctx() ctx: RequestContext, @Body() body: CreateSiteDto): Promise<SiteResponseDto> {
    return this.sites.create(ctx, body);
  }

  @Get(':siteId')
  @Authenticated()
  @ApiOperation({ summary: 'One active site; another than the caller’s own is a 404 to non-admins' })
  @ApiOkResponse({ type: SiteResponseDto })
  get(@Ctx() ctx: RequestContext, @Param('siteId') siteId: string): Promise<SiteResponseDto> {
    return this.sites.get(ctx, siteId);
  }

  @Put(':siteId')
  @Roles('admin')
  @ApiOperation({ summary: 'Update a site (admin); isActive false deactivates it' })
  @ApiOkResponse({ type: SiteResponseDto })
  update(
    @Ctx() ctx: RequestContext,
    @Param('siteId') siteId: string,
    @Body() body: UpdateSiteDto,
  ): Promise<SiteResponseDto> {
    return this.sites.update(ctx, siteId, body);
  }
}
