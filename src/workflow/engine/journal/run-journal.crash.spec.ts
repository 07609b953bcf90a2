import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { createTestDatabase, type TestDatabase } from '../../../../test/utils/test-database';
import type { AuthUser } from '../../../common/context/request-context';
import { rowsOf } from '../../../database/raw-rows';
import { executeParametrized } from '../../../database/built-statement';
import type { AttemptOutcome } from '../driver/step-attempt';
import { RunState } from '../model/run-state';
import { RunQueueRepository } from '../queue/run-queue.repository';
import { DatabaseRunJournal, type StepKind } from './run-journal';
import { RunJournalRepository } from './run-journal.repository';

/**
 * The journal alone (no app, no driver), on a real database: a run of five steps is driven as the
 * driver drives one (a write check before each step with an effect, one attempt per step, the final
 * write), and the process "dies" right after each of its writes, and right after each effect outside
 * the database, in turn. After every such crash the
 * stored run must let a resumed run go on without repeating or losing an effect:
 * - a step whose effect cannot be repeated (not replayable) and may have happened is marked in
 *   flight, unless the row records it done, so a resumed run reports it interrupted;
 * - the row never records a step done whose effect did not commit;
 * - an effect that committed never exists without the run's row (the run would be lost with it).
 * The booted version, with real steps, SMTP and HTTP servers: test/integration/workflow/journal-crash.spec.ts.
 */

type Step = { name: string; kind: StepKind; effect: 'none' | 'database' | 'outside' };

const PURE: StepKind = { replayable: true, carriesRunWrite: false };
const STEPS: Step[] = [
  { name: 'check', kind: PURE, effect: 'none' },
  // A save: replayable, its insert carries the run's first write (one commit for both).
  { name: 'store', kind: { replayable: true, carriesRunWrite: true }, effect: 'database' },
  // An outbound call: done once or reported interrupted, never repeated.
  { name: 'call', kind: { replayable: false, carriesRunWrite: false }, effect: 'outside' },
  { name: 'shape', kind: PURE, effect: 'none' },
  { name: 'hook', kind: { replayable: false, carriesRunWrite: false }, effect: 'outside' },
];
/** The step after `store` the store's write may mark in flight ahead of time (no pure step between). */
const AHEAD_OF_STORE = 2;

const ACTOR: AuthUser = {
  userId: randomUUID(),
  email: 'a@example.com',
  role: 'user',
  siteId: null,
};

/** The process dies here: nothing after it in this drive happens. */
class Crash extends Error {}

interface Drive {
  /** Steps whose effect started (an outside effect may have happened from then on). */
  started: Set<number>;
  /** Steps whose effect committed. */
  committed: Set<number>;
  /** Writes and outside effects so far: the moments a crash is tried at. */
  moments: number;
}

describe('run journal: a crash right after any write or outside effect', () => {
  let database: TestDatabase;
  let runs: RunJournalRepository;
  let queue: RunQueueRepository;
  let workflowId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    const db = database.client.db;
    runs = new RunJournalRepository(db);
    queue = new RunQueueRepository(db);
    workflowId = randomUUID();
    await db.execute(
      sql`insert into workflows (id, name, type, config) values (${workflowId}::uuid, 'journal', 'custom', '{}'::jsonb)`,
    );
  });
  afterAll(() => database.close());

  /**
   * Drives a run; with `crashAt`, the drive dies at its `crashAt`-th moment: right after a write
   * commits, or right after an outside effect happened (before anything records it).
   */
  async function drive(runId: string, crashAt: number | null): Promise<Drive> {
    const done: Drive = { started: new Set(), committed: new Set(), moments: 0 };
    const moment = () => {
      done.moments += 1;
      if (done.moments === crashAt) throw new Crash();
    };
    const crashing = Object.create(runs) as RunJournalRepository;
    for (const name of ['insertRunning', 'checkpoint', 'finish', 'insertFinished'] as const) {
      const real = (runs[name] as (...args: unknown[]) => Promise<unknown>).bind(runs);
      Object.assign(crashing, {
        [name]: async (...args: unknown[]) => {
          const answer = await real(...args);
          moment();
          return answer;
        },
      });
    }
    const state = RunState.fresh({ actor: ACTOR, formTitle: 'Form', data: { n: 1 } }, 'journal', Date.now());
    const journal = new DatabaseRunJournal(
      runId,
      crashing,
      queue,
      state,
      { owner: 'drive', leaseMs: 60_000, dbRetryMs: 0, secrets: new Set() },
      {
        unwritten: {
          id: runId,
          workflowId,
          userId: null,
          siteId: null,
          configId: null,
          request: {},
          startedAt: new Date(),
          definition: {},
          definitionVersion: 1,
          rerunOf: null,
        },
      },
    );
    try {
      for (const [index, step] of STEPS.entries()) {
        if (step.effect !== 'none') {
          const ahead = step.kind.carriesRunWrite ? AHEAD_OF_STORE : null;
          expect(await journal.cancelledBeforeEffect(index, step.kind, ahead)).toBe(false);
        }
        await journal.attempt(async (carried): Promise<AttemptOutcome> => {
          if (step.effect === 'outside') {
            done.started.add(index);
            done.committed.add(index);
            moment();
          } else if (step.effect === 'database') {
            done.started.add(index);
            const write = carried?.take();
            await database.client.db.transaction(async (tx) => {
              if (write) await executeParametrized(tx, write);
              await tx.execute(sql`select 1`);
            });
            done.committed.add(index);
            if (write) moment();
          }
          return { outcome: { result: { step: step.name } } };
        });
        journal.stepRan();
      }
      await journal.finish(
        { status: 'success', message: '', steps: [], dataId: null, durationMs: 1, checkpoint: {} },
        {},
        [],
      );
    } catch (error) {
      if (!(error instanceof Crash)) throw error;
    } finally {
      journal.close();
    }
    return done;
  }

  async function storedRun(runId: string) {
    const [row] = rowsOf(
      await database.client.db.execute(
        sql`select status, next_step, step_in_flight from workflow_runs where id = ${runId}::uuid`,
      ),
    );
    return (row ?? null) as { status: string; next_step: number; step_in_flight: number | null } | null;
  }

  it('without a crash, the run ends stored as a success after a few writes', async () => {
    const runId = randomUUID();
    const done = await drive(runId, null);
    expect(await storedRun(runId)).toMatchObject({ status: 'success' });
    expect(done.committed).toEqual(new Set([1, 2, 4]));
    // The first write rides on the store's insert; the outside steps need theirs; then the end.
    expect(done.moments).toBeGreaterThanOrEqual(5);
  });

  it('after a crash at each write and each outside effect, the stored run repeats and loses nothing', async () => {
    const total = (await drive(randomUUID(), null)).moments;
    for (let crashAt = 1; crashAt <= total; crashAt++) {
      const runId = randomUUID();
      const done = await drive(runId, crashAt);
      const row = await storedRun(runId);
      const context = `crash at moment ${crashAt} of ${total}: ${JSON.stringify(row)}`;
      // An effect that committed has the run's row beside it.
      if (done.committed.size > 0)
        expect({ context, stored: row !== null }).toEqual({ context, stored: true });
      if (row === null || row.status === 'success') continue;
      for (const [index, step] of STEPS.entries()) {
        const recordedDone = row.next_step > index;
        // Never recorded done before its effect committed.
        if (recordedDone && step.effect !== 'none')
          expect({ context, index, committed: done.committed.has(index) }).toEqual({
            context,
            index,
            committed: true,
          });
        // A step that cannot be repeated and may have had its effect is marked in flight.
        if (!step.kind.replayable && done.started.has(index) && !recordedDone)
          expect({ context, index, inFlight: row.step_in_flight }).toEqual({
            context,
            index,
            inFlight: index,
          });
      }
    }
  });
});
