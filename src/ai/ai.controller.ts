import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import {
  ApiBadGatewayResponse,
  ApiCreatedResponse,
  ApiGatewayTimeoutResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RequirePermission } from '../common/auth/auth-decision.decorators';
import { Ctx } from '../common/context/ctx.decorator';
import type { RequestContext } from '../common/context/request-context';
import { AiConfigService } from './ai-config.service';
import { GenerateConfigDto, GeneratedConfigDto, SavedGeneratedConfigDto } from './dto/generate-config.dto';

@ApiTags('ai')
@Controller('api/ai')
export class AiController {
  constructor(private readonly ai: AiConfigService) {}

  @Post('configs/generate')
  @HttpCode(200)
  @RequirePermission('configs', 'create')
  @ApiOperation({
    summary: 'Draft a form configuration from a description and/or sample records or CSV (AI_PROVIDER)',
    description:
      'The draft passes the validation of POST /api/configs as it stands. With `save: true` it is also created (201).',
  })
  @ApiOkResponse({ type: GeneratedConfigDto, description: 'The draft (not saved)' })
  @ApiCreatedResponse({
    type: SavedGeneratedConfigDto,
    description: 'With save: true, the created configuration',
  })
  @ApiUnprocessableEntityResponse({
    description:
      'Invalid body or samples (VALIDATION_FAILED), or samples needed by the provider (AI_SAMPLES_REQUIRED)',
  })
  @ApiPayloadTooLargeResponse({ description: 'Body over BODY_LIMIT' })
  @ApiBadGatewayResponse({
    description:
      'The model answered no valid configuration after a repair round (AI_INVALID_ANSWER) or is unreachable (AI_UNAVAILABLE)',
  })
  @ApiGatewayTimeoutResponse({ description: 'The model did not answer within AI_TIMEOUT_MS (AI_TIMEOUT)' })
  async generate(
    @Ctx() ctx: RequestContext,
    @Body() body: GenerateConfigDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<GeneratedConfigDto | SavedGeneratedConfigDto> {
    const outcome = await this.ai.generate(ctx, body);
    if (outcome.saved) void reply.status(201);
    return outcome.answer;
  }
}
