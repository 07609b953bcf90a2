import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Roles } from '../common/auth/auth-decision.decorators';
import { Ctx } from '../common/context/ctx.decorator';
import type { RequestContext } from '../common/context/request-context';
import { ShortPageQueryDto } from '../common/http/short-page-query.dto';
import { EraseFieldValueDto, ErasureDto, ErasurePageDto } from './dto/erasure.dto';
import { ErasureService } from './erasure.service';

const ACCEPTED =
  '202 with the erasure (and `Location: /api/erasures/:id`); its steps run in the background: poll it until ' +
  '`status` is `done`. A repeat of a running erasure, or of a done one with nothing new to erase, answers that ' +
  'erasure and does nothing more. Admins only; see README "Erasure".';

@ApiTags('erasure')
@Controller('api')
export class ErasureController {
  constructor(private readonly erasures: ErasureService) {}

  @Post('users/:userId/erase')
  @HttpCode(202)
  @Roles('admin')
  @ApiOperation({
    summary:
      "Erase a person's data: their records past the trash, their history's values, their runs, mail and answers",
    description: `The account is deactivated at once and anonymized at the end. ${ACCEPTED}`,
  })
  @ApiAcceptedResponse({ type: ErasureDto })
  @ApiNotFoundResponse({ description: 'USER_NOT_FOUND' })
  @ApiConflictResponse({ description: 'LAST_ADMIN: the only active admin cannot be erased' })
  async eraseUser(
    @Ctx() ctx: RequestContext,
    @Param('userId') userId: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ErasureDto> {
    return located(reply, await this.erasures.eraseUser(ctx, userId));
  }

  @Post('data/:configId/erase')
  @HttpCode(202)
  @Roles('admin')
  @ApiOperation({
    summary:
      "Erase a data subject's records of a form: those whose `field` holds `value`, their history's values and runs",
    description: ACCEPTED,
  })
  @ApiAcceptedResponse({ type: ErasureDto })
  @ApiNotFoundResponse({ description: 'CONFIG_NOT_FOUND' })
  async eraseFieldValue(
    @Ctx() ctx: RequestContext,
    @Param('configId') configId: string,
    @Body() body: EraseFieldValueDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ErasureDto> {
    return located(reply, await this.erasures.eraseFieldValue(ctx, configId, body));
  }

  @Get('erasures')
  @Roles('admin')
  @ApiOperation({
    summary: 'The audit log of erasures (who erased whom, how many of each kind, when), newest first',
  })
  @ApiOkResponse({ type: ErasurePageDto })
  list(@Ctx() ctx: RequestContext, @Query() query: ShortPageQueryDto): Promise<ErasurePageDto> {
    return this.erasures.list(ctx, query);
  }

  @Get('erasures/:erasureId')
  @Roles('admin')
  @ApiOperation({ summary: 'An erasure: its progress (steps done) and what it removed' })
  @ApiOkResponse({ type: ErasureDto })
  @ApiNotFoundResponse({ description: 'ERASURE_NOT_FOUND' })
  get(@Ctx() ctx: RequestContext, @Param('erasureId') erasureId: string): Promise<ErasureDto> {
    return this.erasures.get(ctx, erasureId);
  }
}

function located(reply: FastifyReply, erasure: ErasureDto): ErasureDto {
  reply.header('location', `/api/erasures/${erasure.id}`);
  return erasure;
}
