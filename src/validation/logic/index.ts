export { logicProblem } from './logic-checker';
export { evaluateLogic, LogicBudget, LogicEvaluationFailed, LogicLimitExceeded } from './logic-evaluator';
export { LOGIC_LIMITS } from './logic-limits';
export { dottedPathProblem } from './logic-paths';
