import type { Database } from '../database.types';
import { currentReadTarget } from './read-scope';

/**
 * The database repositories are given: the primary's, except inside a routed read (see read-scope),
 * where every property (select, execute, transaction, ...) is the replica's. Outside a routed read it
 * costs one lookup per access and nothing else.
 */
export function routedDatabase(primary: Database): Database {
  return new Proxy(primary, {
    get(target, property) {
      const replica = currentReadTarget()?.db;
      if (!replica) return Reflect.get(target, property, target);
      const value: unknown = Reflect.get(replica, property, replica);
      return typeof value === 'function' ? value.bind(replica) : value;
    },
  });
}
