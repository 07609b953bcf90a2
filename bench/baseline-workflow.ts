// The workflow figure's baseline: the benchmark workflow's four steps written by hand (what a developer
// would write instead of a workflow): validate (Ajv and the form's three rules), save (the record with
// its computed values), transform (two fields picked), api (POST to the receiver with Node's fetch,
// whose global agent keeps connections alive), then the run persisted as one row. It imports nothing from the service.
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { Pool } from 'pg';
import { BASELINE_SQL } from './baseline-sql';
import { BENCH_FORM } from './suites/form-fixture';

const ajv = new Ajv({ allErrors: true });
addFormats(ajv);
const validate = ajv.compile(BENCH_FORM.schema);

type Submission = Record<string, unknown> & { age: number; qty?: number; price?: number; score?: number };

/** The form's three rules, as the benchmark form declares them; the failing rules' names. */
function ruleErrors(data: Submission): string[] {
  const errors: string[] = [];
  if (!(data.age >= 18)) errors.push('adult');
  if (data.qty !== undefined && data.qty > 1000) errors.push('qtyLimit');
  if (data.score !== undefined && data.score > 1000) errors.push('scoreRange');
  return errors;
}

export interface WorkflowAnswer {
  status: number;
  body: unknown;
}

export async function runBaselineWorkflow(
  pool: Pool,
  configId: string,
  data: unknown,
  receiverUrl: string,
): Promise<WorkflowAnswer> {
  const startedAt = new Date();
  if (!validate(data)) return { status: 422, body: { errors: validate.errors } };
  const submission = data as Submission;
  const failed = ruleErrors(submission);
  if (failed.length > 0) return { status: 422, body: { rules: failed } };
  const computed = {
    total: (submission.qty ?? 0) * (submission.price ?? 0),
    isSenior: submission.age >= 65,
  };
  const saved = await pool.query(BASELINE_SQL.createWithComputed, [configId, submission, computed]);
  const recordId: string = saved.rows[0].id;
  const shape = { who: submission.name, city: submission.city };
  const sent = await fetch(receiverUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: recordId, shape }),
  });
  const answer: unknown = await sent.json();
  const steps = [
    { name: 'check', status: 'success' },
    { name: 'store', status: 'success', result: { dataId: recordId } },
    { name: 'shape', status: 'success', result: shape },
    {
      name: 'forward',
      status: sent.ok ? 'success' : 'failed',
      result: { status: sent.status, body: answer },
    },
  ];
  const run = await pool.query(BASELINE_SQL.insertRun, [recordId, JSON.stringify(steps), startedAt]);
  return { status: 200, body: { runId: run.rows[0].id, status: 'success', dataId: recordId } };
}
