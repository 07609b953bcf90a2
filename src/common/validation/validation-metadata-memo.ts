import { getMetadataStorage } from 'class-validator';
import type { MetadataStorage } from 'class-validator/types/metadata/MetadataStorage';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';

type Lookup = MetadataStorage['getTargetValidationMetadatas'];

const MEMOIZED = Symbol('fdws.memoizedValidationMetadata');

/**
 * class-validator looks up a class's rules at every validation (and Nest's pipe once more per body):
 * a walk of every validated class of the application with an `instanceof` each, 2-3% of a workflow
 * run's CPU (bench/README). The rules of a class change only while classes are being declared, so
 * the answer is kept per class and options until a rule is added (which forgets them all). The kept
 * arrays are frozen: a caller that changed one would change the next caller's answer. Installed
 * once, on the storage every copy of class-validator in the process shares (it lives on `global`).
 */
export function memoizeValidationMetadata(): void {
  const storage = getMetadataStorage() as unknown as Record<PropertyKey, unknown> & {
    getTargetValidationMetadatas: Lookup;
    addValidationMetadata(metadata: unknown): void;
    addConstraintMetadata(metadata: unknown): void;
  };
  if (storage[MEMOIZED]) return;
  storage[MEMOIZED] = true;
  const lookup = storage.getTargetValidationMetadatas.bind(storage);
  let known = new WeakMap<object, Map<string, ValidationMetadata[]>>();
  storage.getTargetValidationMetadatas = (target, targetSchema, always, strictGroups, groups) => {
    let byOptions = known.get(target);
    if (byOptions === undefined) {
      byOptions = new Map();
      known.set(target, byOptions);
    }
    const key = `${targetSchema ?? ''}\u0000${always}\u0000${strictGroups}\u0000${groups?.join('\u0001') ?? ''}\u0000${groups?.length ?? -1}`;
    let metadatas = byOptions.get(key);
    if (metadatas === undefined) {
      metadatas = Object.freeze(
        lookup(target, targetSchema, always, strictGroups, groups),
      ) as ValidationMetadata[];
      byOptions.set(key, metadatas);
    }
    return metadatas;
  };
  for (const add of ['addValidationMetadata', 'addConstraintMetadata'] as const) {
    const original = storage[add].bind(storage);
    storage[add] = (metadata: unknown) => {
      known = new WeakMap();
      original(metadata);
    };
  }
}
