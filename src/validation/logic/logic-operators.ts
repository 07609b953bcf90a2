import { LogicEngine } from 'json-logic-engine';

/**
 * The operators a rule may use: the engine's own methods as captured at start-up (own properties
 * only, so nothing inherited from Object.prototype), minus those that throw or catch by design
 * (`throw`, `try`), that return unevaluated input (`preserve`) or build objects with arbitrary keys
 * (`eachKey`), and `pipe`, which forms do not need.
 */
const EXCLUDED = new Set(['throw', 'try', 'preserve', 'eachKey', 'pipe']);

const engineMethods: Record<string, unknown> = new LogicEngine().methods;

export const ALLOWED_OPERATORS: ReadonlySet<string> = new Set(
  Object.keys(engineMethods).filter((name) => Object.hasOwn(engineMethods, name) && !EXCLUDED.has(name)),
);

export function isAllowedOperator(name: string): boolean {
  return ALLOWED_OPERATORS.has(name);
}
