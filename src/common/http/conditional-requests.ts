import { applyDecorators, HttpStatus, Inject, Injectable } from '@nestjs/common';
import { ApiHeader, ApiResponse } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { AppError } from '../errors/app-error';

/**
 * Conditional requests (RFC 9110 section 13) on the resources that carry a `version` (records,
 * configurations, workflows). The ETag is the version as a strong validator, `"<version>"`: the URL
 * names the resource, so the number alone tells its states apart.
 */

/** What a write's `If-Match` asks for: nothing (absent), any current state (`*`) or one of these versions. */
export type IfMatch = { kind: 'absent' } | { kind: 'any' } | { kind: 'versions'; versions: number[] };

/** A write with no precondition (internal callers: a workflow's rollback, a step). */
export const NO_PRECONDITION: IfMatch = { kind: 'absent' };

export const etagOf = (version: number): string => `"${version}"`;

/** The versions named by an entity-tag list; weak tags (`W/"3"`) never match an If-Match (strong comparison). */
function listedVersions(header: string, options: { weak: boolean }): number[] | 'any' {
  const versions: number[] = [];
  for (const raw of header.split(',')) {
    const tag = raw.trim();
    if (tag === '*') return 'any';
    const match = /^(W\/)?"?(\d{1,9})"?$/.exec(tag);
    if (match && (options.weak || !match[1])) versions.push(Number(match[2]));
  }
  return versions;
}

function headerOf(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** The parsed If-Match; a tag that is no version of ours is kept as matching nothing (412, never 400). */
export function parseIfMatch(header: string | undefined): IfMatch {
  if (header === undefined || header.trim() === '') return NO_PRECONDITION;
  const versions = listedVersions(header, { weak: false });
  return versions === 'any' ? { kind: 'any' } : { kind: 'versions', versions };
}

/** Whether a write under `ifMatch` may change the resource at `version`. */
export function ifMatchAllows(ifMatch: IfMatch, version: number): boolean {
  return ifMatch.kind !== 'versions' || ifMatch.versions.includes(version);
}

/**
 * The versions a conditional UPDATE may apply to (`... and version = any($versions)`), or null when
 * any current version will do. Checked in the write itself, so the check and the write are one.
 */
export function expectedVersions(ifMatch: IfMatch): number[] | null {
  return ifMatch.kind === 'versions' ? ifMatch.versions : null;
}

/** 412: the resource changed since the client's version; the body says what it is now. */
export function preconditionFailed(currentVersion: number, details: Record<string, unknown> = {}): AppError {
  return new AppError('PRECONDITION_FAILED', {
    params: { version: currentVersion },
    details: { currentVersion, etag: etagOf(currentVersion), ...details },
  });
}

/**
 * The HTTP side of conditional requests for controllers: reading If-Match (428 without one when
 * REQUIRE_IF_MATCH is on), setting the ETag, answering 304 to a matching If-None-Match.
 */
@Injectable()
export class ConditionalRequests {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** The request's If-Match; without one, a 428 when the deployment requires it. */
  ifMatch(request: FastifyRequest): IfMatch {
    const ifMatch = parseIfMatch(headerOf(request, 'if-match'));
    if (ifMatch.kind === 'absent' && this.config.requireIfMatch) {
      throw new AppError('PRECONDITION_REQUIRED');
    }
    return ifMatch;
  }

  /** Sets the ETag of the version the answer shows; returns the body for chaining. */
  tagged<T>(reply: FastifyReply, version: number, body: T): T {
    void reply.header('etag', etagOf(version));
    return body;
  }

  /**
   * Sets the ETag; true (and the status 304) when If-None-Match names this version or is `*`
   * (weak comparison, as RFC 9110 asks for If-None-Match): the controller then sends no body.
   */
  notModified(request: FastifyRequest, reply: FastifyReply, version: number): boolean {
    void reply.header('etag', etagOf(version));
    const header = headerOf(request, 'if-none-match');
    if (header === undefined) return false;
    const versions = listedVersions(header, { weak: true });
    if (versions !== 'any' && !versions.includes(version)) return false;
    void reply.status(HttpStatus.NOT_MODIFIED);
    return true;
  }
}

const ETAG_HEADER = {
  ETag: { description: 'The version shown, `"<version>"`', schema: { type: 'string', example: '"3"' } },
};

/** OpenAPI of a single-resource read: If-None-Match, the ETag, 304. */
export const ApiConditionalRead = () =>
  applyDecorators(
    ApiHeader({
      name: 'If-None-Match',
      required: false,
      description: 'An ETag (`"3"`) or `*`: 304 without a body while the resource is at that version',
    }),
    ApiResponse({ status: 200, headers: ETAG_HEADER }),
    ApiResponse({ status: 304, description: 'Not modified: the version named in If-None-Match is current' }),
  );

/** OpenAPI of a single-resource write: If-Match, the ETag of the answer (`status`), 412 and 428. */
export const ApiConditionalWrite = (status: number = HttpStatus.OK) =>
  applyDecorators(
    ApiHeader({
      name: 'If-Match',
      required: false,
      description:
        'The ETag (`"3"`) of the version the change is based on, or `*`; required with REQUIRE_IF_MATCH=true',
    }),
    ApiResponse({ status, headers: ETAG_HEADER }),
    ApiResponse({
      status: HttpStatus.PRECONDITION_FAILED,
      description:
        'PRECONDITION_FAILED: changed since the If-Match version; `details.currentVersion` (records: `details.changedFields`)',
    }),
    ApiResponse({
      status: 428,
      description: 'PRECONDITION_REQUIRED: no If-Match, and the deployment requires one (REQUIRE_IF_MATCH)',
    }),
  );

/** OpenAPI of a create: the ETag of the new resource (version 1). */
export const ApiTaggedCreate = () => ApiResponse({ status: HttpStatus.CREATED, headers: ETAG_HEADER });
