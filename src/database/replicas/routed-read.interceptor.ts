import {
  applyDecorators,
  Injectable,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { catchError, from, mergeMap, type Observable } from 'rxjs';
import { onReadTarget } from './read-scope';
import { DATABASE_POSITION_HEADER, ReadRouting } from './read-routing';

/**
 * Marks a route whose reads may be answered by a replica (README "Read replicas"). Only for routes
 * that write nothing: every query of the handler goes to the chosen database. Access checks in
 * guards ran before, on the primary.
 */
export const RoutedRead = () =>
  applyDecorators(
    // On the marked routes only: a global interceptor wraps every request of every route in
    // observables, a measurable share of a create's CPU (see i18n-core.module.ts).
    UseInterceptors(RoutedReadInterceptor),
    ApiHeader({
      name: 'X-Database-Position',
      required: false,
      description:
        'The X-Database-Position of the last write answer this client saw: with read replicas, the read is answered by a replica only once it has replayed that position (README "Read replicas")',
    }),
  );

declare module 'fastify' {
  interface FastifyRequest {
    /** A routed read (no write position is taken after it). */
    routedRead?: boolean;
  }
}

/**
 * Runs a routed read's handler on the replica ReadRouting chooses. A read whose replica fails
 * before it answers (down, refusing, its database missing) runs again on the primary: a replica's
 * failure never answers 5xx. A streamed answer already under way cannot be taken back: it ends
 * with an error (the connection is cut before the last chunk), never a short file that looks whole.
 */
@Injectable()
export class RoutedReadInterceptor implements NestInterceptor {
  constructor(private readonly routing: ReadRouting) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    request.routedRead = true;
    const echoed = this.routing.echoedPosition(request.headers[DATABASE_POSITION_HEADER]);
    if (!this.routing.enabled) return next.handle();
    return from(this.routing.targetFor(request.user?.userId ?? null, echoed)).pipe(
      mergeMap((target) => {
        if (!target) return next.handle();
        // handle() binds the handler to the async context it is called in.
        return onReadTarget(target, () => next.handle()).pipe(
          catchError((error: unknown) => {
            if (!this.routing.retriesOnPrimary(target, error)) throw error;
            return onReadTarget(null, () => next.handle());
          }),
        );
      }),
    );
  }
}
