import type { Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

/**
 * Nest's Reflector, with each answer kept per decorated target (a handler or a controller class)
 * and key. Guards read route metadata on every request (the throttler guard alone seven keys for
 * two targets each), and each read is two lookups in reflect-metadata's maps: about 1.3% of a
 * create's CPU. Route metadata is set by decorators when the classes are declared, before the
 * application serves anything, so an answer never changes once read. Not for metadata a program
 * defines while it runs.
 */
export class MemoizedReflector extends Reflector {
  private readonly known = new WeakMap<object, Map<unknown, unknown>>();

  override get<TResult = unknown, TKey = unknown>(
    metadataKeyOrDecorator: TKey,
    target: Type | ((...args: never[]) => unknown),
  ): TResult {
    let byKey = this.known.get(target);
    if (byKey === undefined) {
      byKey = new Map();
      this.known.set(target, byKey);
    }
    if (byKey.has(metadataKeyOrDecorator)) return byKey.get(metadataKeyOrDecorator) as TResult;
    const value = super.get<TResult, TKey>(metadataKeyOrDecorator, target);
    byKey.set(metadataKeyOrDecorator, value);
    return value;
  }
}
