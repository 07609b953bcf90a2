import type { LightMyRequestResponse } from 'fastify';
import { WorkflowClock } from '../../src/workflow/engine/workflow-clock';
import { bodyOf } from './expect-status';
import type { TestApp } from './test-app';
import { until } from './until';

/** HTTP helpers for the workflow e2e tests: everything goes through the real routes. */

export type WorkflowBody = Record<string, unknown>;

/** A minimal valid definition (one transform step) that a `user` may run; `overrides` replace top-level fields. */
export function workflowBody(overrides: WorkflowBody = {}): WorkflowBody {
  return {
    name: 'Workflow',
    type: 'custom',
    permissions: { roles: ['user'] },
    config: { steps: [{ name: 'shape', type: 'transform', config: { mapping: { who: 'name' } } }] },
    ...overrides,
  };
}

/**
 * The steps of the commonest durable run: `store` saves the record, then `tell` POSTs its id to `url`
 * (an `api` step, a partner told of the new record).
 */
export function saveThenPost(url: string): WorkflowBody[] {
  return [
    { name: 'store', type: 'save' },
    { name: 'tell', type: 'api', config: { url, method: 'POST', payload: { id: '{{savedData._id}}' } } },
  ];
}

export function postWorkflow(t: TestApp, token: string, body: WorkflowBody): Promise<LightMyRequestResponse> {
  return t.request({ method: 'POST', url: '/api/workflow', token, payload: body });
}

/** Creates a workflow as `token` (an admin) and returns its id; fails the test on anything but 201. */
export async function createWorkflow(t: TestApp, token: string, body: WorkflowBody): Promise<string> {
  return bodyOf(await postWorkflow(t, token, body), 201, 'workflow create').id;
}

/** `steps` wrapped in a definition a `user` may run; `extra` adds top-level or `config` fields. */
export async function createSteps(
  t: TestApp,
  token: string,
  steps: unknown[],
  extra: { config?: WorkflowBody } & WorkflowBody = {},
): Promise<string> {
  const { config, ...rest } = extra;
  return createWorkflow(t, token, workflowBody({ ...rest, config: { steps, ...config } }));
}

export function execute(
  t: TestApp,
  token: string,
  workflowId: string,
  configId: string,
  data: Record<string, unknown>,
  headers?: Record<string, string>,
): Promise<LightMyRequestResponse> {
  return t.request({
    method: 'POST',
    url: `/api/workflow/${workflowId}/execute`,
    token,
    headers,
    payload: { configId, data },
  });
}

/** Runs a workflow that must start (200) and returns the result object. */
export async function run(
  t: TestApp,
  token: string,
  workflowId: string,
  configId: string,
  data: Record<string, unknown>,
): Promise<any> {
  return bodyOf(await execute(t, token, workflowId, configId, data), 200, 'workflow execute');
}

/** Queues a run (`Prefer: respond-async`); the answer is a 202 with the run id, or the refusal. */
export function executeAsync(
  t: TestApp,
  token: string,
  workflowId: string,
  configId: string,
  data: Record<string, unknown>,
): Promise<LightMyRequestResponse> {
  return execute(t, token, workflowId, configId, data, { prefer: 'respond-async' });
}

/** A run as `token` sees it (GET /api/workflow/runs/:runId); fails the test on anything but 200. */
export async function getRun(t: TestApp, token: string, runId: string): Promise<any> {
  const response = await t.request({ method: 'GET', url: `/api/workflow/runs/${runId}`, token });
  return bodyOf(response, 200, 'run read');
}

/** A page of a workflow's runs, newest first. */
export type RunsPage = { data: any[]; totalCount: number; page: number; pages: number };

/** The runs of a workflow as `token` sees them (`query`: `?limit=100`, ...); fails on anything but 200. */
export async function listRuns(t: TestApp, token: string, workflowId: string, query = ''): Promise<RunsPage> {
  const response = await t.request({ method: 'GET', url: `/api/workflow/${workflowId}/runs${query}`, token });
  return bodyOf(response, 200, 'run list');
}

/** What a run that ended `failed` answers and stores, its `steps` matched as given. */
export function failedRun(...steps: Record<string, unknown>[]): Record<string, unknown> {
  return { success: false, status: 'failed', steps };
}

/** A run no longer queued or running (it ended, or waits for a decision). */
export const finished = (run: { status: string }): boolean => !['queued', 'running'].includes(run.status);

/** Reads a run as `token` until `done` accepts it (by default: until it has `finished`), and returns it. */
export function waitForRun(
  t: TestApp,
  token: string,
  runId: string,
  done: (run: any) => boolean = finished,
): Promise<any> {
  return until(() => getRun(t, token, runId), done, `run ${runId}`);
}

/** The active records of a configuration as the admin sees them. */
export async function activeRecords(
  t: TestApp,
  admin: string,
  configId: string,
): Promise<{ total: number; data: any[] }> {
  const response = await t.request({ method: 'GET', url: `/api/data/${configId}`, token: admin });
  return bodyOf(response, 200, 'record list');
}

/** Replaces the form permissions of a configuration (admin). */
export async function replaceFormPermissions(
  t: TestApp,
  admin: string,
  configId: string,
  body: { roles?: Record<string, string[]>; users?: Record<string, string[]> },
): Promise<void> {
  const response = await t.request({
    method: 'PUT',
    url: `/api/permissions/${configId}`,
    token: admin,
    payload: body,
  });
  bodyOf(response, 200, 'permission replace');
}

/**
 * Replaces the runner's clock waits on the app's `WorkflowClock` singleton: `sleep` resolves at
 * once and records every wait it was asked for (the real clock never runs). Call `restore()` after.
 */
export function recordClock(t: TestApp): { delays: number[]; restore(): void } {
  const clock = t.app.get(WorkflowClock);
  const delays: number[] = [];
  const spy = jest.spyOn(clock, 'sleep').mockImplementation(async (ms: number) => {
    if (ms > 0) delays.push(ms);
  });
  return { delays, restore: () => spy.mockRestore() };
}
