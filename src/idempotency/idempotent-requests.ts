import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { multipartParts, type MultipartPart } from '../common/http/multipart-body';
import type { IdempotencyScope } from './idempotency.repository';
import { IdempotencyService, type IdempotentAnswer } from './idempotency.service';
import { MultipartFingerprint } from './multipart-fingerprint';

/** The `Idempotency-Key` header in the API document of a route that honours it. */
export const ApiIdempotencyKey = () =>
  ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'Repeats answer the first response (24 h)',
  });

/**
 * `Idempotency-Key` on a route: HTTP only, the rule is IdempotencyService's. A controller hands it
 * the route's work; a request without the header just does the work. (Not an interceptor: Nest
 * wraps every request of an intercepted route in observables and async-context bindings, a
 * measurable share of a create's CPU, also for the requests without a key.)
 */
@Injectable()
export class IdempotentRequests {
  constructor(private readonly idempotency: IdempotencyService) {}

  async answer<T>(request: FastifyRequest, reply: FastifyReply, work: () => Promise<T>): Promise<T> {
    const scope = scopeOf(request);
    if (!scope) return work();
    const answer = await this.idempotency.run(scope, request.body, async () => {
      const body = await work();
      // Nest set the route's status before the handler; the work may have set another (202).
      return { status: reply.statusCode, body };
    });
    return answered<T>(reply, answer);
  }

  /**
   * The same for a multipart body, which only the work reads (its files stored as they arrive): the
   * work gets the parts, and the body's fingerprint (every part, each file by its SHA-256) is taken
   * as it reads them; a repeat reads its own parts to compare, storing nothing.
   */
  async answerMultipart<T>(
    request: FastifyRequest,
    reply: FastifyReply,
    work: (parts: AsyncIterable<MultipartPart>) => Promise<T>,
  ): Promise<T> {
    const scope = scopeOf(request);
    if (!scope) return work(multipartParts(request));
    const answer = await this.idempotency.runStreamed(
      scope,
      async () => {
        const fingerprint = new MultipartFingerprint();
        const body = await work(fingerprint.taking(multipartParts(request)));
        return { status: reply.statusCode, body, fingerprint: fingerprint.digest() };
      },
      () => new MultipartFingerprint().readAll(multipartParts(request)),
    );
    return answered<T>(reply, answer);
  }
}

/** The key's scope, or null when the request carries no key (or no user to scope it to). */
function scopeOf(request: FastifyRequest): IdempotencyScope | null {
  const key = request.headers['idempotency-key'];
  if (typeof key !== 'string' || !request.user) return null;
  return { userId: request.user.userId, route: routeScope(request), key };
}

/** The kept (or first) answer on the reply: its status, and a queued run's location. */
function answered<T>(reply: FastifyReply, answer: IdempotentAnswer): T {
  reply.status(answer.status);
  if (answer.status === 202 && isQueued(answer.body))
    reply.header('location', `/api/workflow/runs/${answer.body.runId}`);
  return answer.body as T;
}

function isQueued(body: unknown): body is { runId: string } {
  return typeof body === 'object' && body !== null && typeof (body as { runId?: unknown }).runId === 'string';
}

/**
 * What a key is scoped to besides the user: the method, the whole URL (`?dryRun=true` is another
 * request than the real execute), `Prefer` (`respond-async` answers otherwise) and the site the
 * request came through (a user without a site may use the same key on two sites' hosts, and each
 * site's answer is its own: a record of site A must not answer a request made through site B).
 * Stored as a digest: the scope is part of the table's btree key, and a URL's query is the client's
 * to lengthen; so the site needs no column of its own.
 */
function routeScope(request: FastifyRequest): string {
  const prefer = request.headers.prefer;
  const preference = (Array.isArray(prefer) ? prefer.join(',') : (prefer ?? '')).trim().toLowerCase();
  // Without a site the scope is the one kept before the site was part of it (no header holds "\n").
  const site = request.siteId ? `\n${request.siteId}` : '';
  const digest = createHash('sha256').update(`${request.url}\n${preference}${site}`).digest('base64url');
  return `${request.method} ${digest}`;
}
