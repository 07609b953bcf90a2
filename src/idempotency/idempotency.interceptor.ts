import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { IdempotencyService } from './idempotency.service';

/**
 * Applies `Idempotency-Key` to a route (`@UseInterceptors(IdempotencyInterceptor)`): HTTP only, the
 * rule is the service's. Requests without the header pass through untouched.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly reflector: Reflector,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const key = request.headers['idempotency-key'];
    if (typeof key !== 'string' || !request.user) return next.handle();
    const declared = this.reflector.get<number | undefined>(HTTP_CODE_METADATA, context.getHandler());
    const scope = {
      userId: request.user.userId,
      route: `${request.method} ${request.url.split('?')[0]}`,
      key,
    };
    return from(
      this.idempotency
        .run(scope, request.body, async () => {
          const body = await lastValueFrom(next.handle(), { defaultValue: undefined });
          // A status the handler set itself (202) wins over the route's declared one.
          const status =
            reply.statusCode !== 200
              ? reply.statusCode
              : (declared ?? (request.method === 'POST' ? 201 : 200));
          return { status, body };
        })
        .then((answer) => {
          reply.status(answer.status);
          if (answer.status === 202 && isQueued(answer.body))
            reply.header('location', `/api/workflow/runs/${answer.body.runId}`);
          return answer.body;
        }),
    );
  }
}

function isQueued(body: unknown): body is { runId: string } {
  return typeof body === 'object' && body !== null && typeof (body as { runId?: unknown }).runId === 'string';
}
