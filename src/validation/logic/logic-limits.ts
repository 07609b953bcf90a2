/**
 * The documented limits of JSONLogic (README "Rule limits"). Definition-time limits give a 422 when a
 * rule is saved; evaluation limits give a 400 `RULE_LIMIT_EXCEEDED` for the submission that hits them.
 */
export const LOGIC_LIMITS = {
  /** Nesting depth of one rule (operators inside operators). */
  maxDepth: 32,
  /** Operators, arguments and literals in one rule. */
  maxNodes: 1000,
  /**
   * Work units for all rules of one submission: one per operator plus the length of each array or
   * string it takes or returns. Bounds nested iteration: 10,000 elements can be iterated a few
   * times, not 10,000 times 10,000.
   */
  maxWork: 200_000,
  /** Elements of an array a rule reads, iterates over or builds. */
  maxArrayLength: 10_000,
  /** Characters of a string a rule reads or builds. */
  maxStringLength: 65_536,
} as const;
