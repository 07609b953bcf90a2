import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from '../common/auth/auth-decision.decorators';
import { SkipSiteResolution } from '../common/context/skip-site.decorator';
import { AppError } from '../common/errors/app-error';
import { DatabaseClient } from '../database/database-client';
import { DatabaseHealth } from '../database/database-health';
import { HealthDto } from './health.dto';

/**
 * `/health` is liveness (the process serves; no database, cache or Redis call), `/health/ready` is
 * readiness (the database answers). Neither needs the request's site.
 */
@ApiTags('health')
@SkipThrottle()
@SkipSiteResolution()
@Controller('health')
export class HealthController {
  constructor(
    private readonly database: DatabaseClient,
    private readonly health: DatabaseHealth,
  ) {}

  @Get()
  @Public()
  @ApiOperation({ summary: 'Liveness: the process is up (does not touch the database)' })
  @ApiOkResponse({ type: HealthDto })
  live(): HealthDto {
    return { status: 'ok' };
  }

  @Get('ready')
  @Public()
  @ApiOperation({ summary: 'Readiness: the database answers' })
  @ApiOkResponse({ type: HealthDto })
  @ApiServiceUnavailableResponse({ description: 'The database is unreachable' })
  async ready(): Promise<HealthDto> {
    try {
      await this.database.ping();
    } catch (error) {
      this.health.unavailable(error);
      throw new AppError('DATABASE_UNAVAILABLE');
    }
    this.health.answered();
    return { status: 'ok', database: this.database.driver };
  }
}
