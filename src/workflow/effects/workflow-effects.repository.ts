import { Inject, Injectable } from '@nestjs/common';
import { and, asc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { DATABASE, type Database } from '../../database/database.types';
import { rowsOf } from '../../database/raw-rows';
import { workflowEffects } from '../../database/schema';

export type WorkflowEffectRow = typeof workflowEffects.$inferSelect;
export type EffectKeyOf = Pick<WorkflowEffectRow, 'runId' | 'stepIndex' | 'effectIndex'>;
/** An effect as one claim took it: its key and the attempt the claim counted. */
type ClaimOf = EffectKeyOf & Pick<WorkflowEffectRow, 'attempts'>;

/** An effect as a run's final write commits it to the outbox. */
export interface CommittedEffect {
  stepIndex: number;
  effectIndex: number;
  stepName: string;
  kind: string;
  payload: Record<string, unknown>;
}

/** A claimed effect, with its age (since its run committed to it) for the retry bound. */
export type ClaimedEffect = CommittedEffect & { runId: string; attempts: number; ageMs: number };

/**
 * The statement that puts a run's effects into the outbox, for the run's own write to carry (a
 * data-modifying CTE, as the record's workflow log is): `runId` is a value or a subquery that is
 * empty when the run's write did not happen, so no effect is stored without its run. A key stored
 * already (the same final write made again after a crash) is kept as it is.
 */
export function insertEffects(runId: SQL, effects: CommittedEffect[]): SQL {
  return sql`insert into ${workflowEffects} (run_id, step_index, effect_index, step_name, kind, payload)
    select ${runId}, e.step_index, e.effect_index, e.step_name, e.kind, e.payload
    from jsonb_to_recordset(${effectsJson(effects)}::jsonb)
      as e(step_index int, effect_index int, step_name text, kind text, payload jsonb)
    where ${runId} is not null
    on conflict do nothing`;
}

/** Effects as the JSON `jsonb_to_recordset` reads (here, and in the run's end, fdws_run_ended). */
export function effectsJson(effects: CommittedEffect[]): string {
  return JSON.stringify(effects.map(asRecord));
}

/** One effect under the column names `jsonb_to_recordset` reads. */
function asRecord(effect: CommittedEffect) {
  return {
    step_index: effect.stepIndex,
    effect_index: effect.effectIndex,
    step_name: effect.stepName,
    kind: effect.kind,
    payload: effect.payload,
  };
}

/**
 * The outbox table. Any instance claims due effects (`FOR UPDATE SKIP LOCKED`); a claim pushes the
 * effect's due time one lease ahead, so an effect whose sender died is claimed again afterwards.
 */
@Injectable()
export class WorkflowEffectsRepository {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** Claims up to `limit` due effects (of one run only when `runId` is given) for `leaseMs`. */
  async claimDue(limit: number, leaseMs: number, runId?: string): Promise<ClaimedEffect[]> {
    const ofRun = runId ? sql`and run_id = ${runId}::uuid` : sql``;
    const result = await this.db.execute(sql`
      update ${workflowEffects} e
      set attempts = e.attempts + 1, available_at = now() + ${`${leaseMs} milliseconds`}::interval
      from (
        select run_id, step_index, effect_index from ${workflowEffects}
        where state = 'pending' and available_at <= now() ${ofRun}
        order by available_at
        limit ${limit}
        for update skip locked
      ) due
      where e.run_id = due.run_id and e.step_index = due.step_index and e.effect_index = due.effect_index
      returning e.run_id, e.step_index, e.effect_index, e.step_name, e.kind, e.payload, e.attempts,
        (extract(epoch from now() - e.created_at) * 1000)::bigint as age_ms`);
    return rowsOf(result).map((row) => ({
      runId: String(row.run_id),
      stepIndex: Number(row.step_index),
      effectIndex: Number(row.effect_index),
      stepName: String(row.step_name),
      kind: String(row.kind),
      payload: (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as Record<
        string,
        unknown
      >,
      attempts: Number(row.attempts),
      ageMs: Number(row.age_ms),
    }));
  }

  /**
   * The three outcomes of a claimed attempt are written only while the effect is still pending and
   * at that attempt: a sender whose claim ran out (another instance claimed it since) writes nothing.
   */
  async markSent(claim: ClaimOf): Promise<void> {
    await this.db
      .update(workflowEffects)
      .set({ state: 'sent', sentAt: sql`now()`, lastError: null })
      .where(this.claimed(claim));
  }

  /** Due again in `delayMs`, with the cause of this attempt's failure. */
  async scheduleRetry(claim: ClaimOf, delayMs: number, lastError: { code: string; message: string }) {
    await this.db
      .update(workflowEffects)
      .set({ lastError, availableAt: sql`now() + ${`${delayMs} milliseconds`}::interval` })
      .where(this.claimed(claim));
  }

  async markFailed(claim: ClaimOf, lastError: { code: string; message: string }): Promise<void> {
    await this.db.update(workflowEffects).set({ state: 'failed', lastError }).where(this.claimed(claim));
  }

  /** How many effects are in each state (metrics); the sent ones go with their runs' retention. */
  async countByState(): Promise<Record<string, number>> {
    const result = await this.db.execute(
      sql`select state, count(*) as count from ${workflowEffects} group by state`,
    );
    return Object.fromEntries(rowsOf(result).map((row) => [String(row.state), Number(row.count)]));
  }

  /** The effects of the given runs, in run, step and effect order (the runs' delivery state). */
  async ofRuns(runIds: string[]): Promise<WorkflowEffectRow[]> {
    if (runIds.length === 0) return [];
    return this.db
      .select()
      .from(workflowEffects)
      .where(inArray(workflowEffects.runId, runIds))
      .orderBy(asc(workflowEffects.stepIndex), asc(workflowEffects.effectIndex));
  }

  /** Every effect of these runs, whatever its state (an erasure: a sent mail's payload holds the run's data); how many. */
  async deleteOfRuns(runIds: string[]): Promise<number> {
    if (runIds.length === 0) return 0;
    const rows = await this.db
      .delete(workflowEffects)
      .where(sql`${workflowEffects.runId} = any(${sql.param(runIds)}::uuid[])`)
      .returning({ runId: workflowEffects.runId });
    return rows.length;
  }

  /**
   * Drops the mail not sent yet to `email` (among its recipients, `Name <address>` or bare,
   * compared case-insensitively); how many. An erasure's: nothing more goes out to that person.
   */
  async dropPendingMailTo(email: string): Promise<number> {
    const rows = await this.db
      .delete(workflowEffects)
      .where(
        and(
          eq(workflowEffects.state, 'pending'),
          eq(workflowEffects.kind, 'mail'),
          sql`exists (select 1 from unnest(string_to_array(${workflowEffects.payload} ->> 'to', ',')) as r(recipient)
            where lower(coalesce(substring(r.recipient from '<([^>]*)>'), trim(r.recipient))) = lower(${email}))`,
        ),
      )
      .returning({ runId: workflowEffects.runId });
    return rows.length;
  }

  private claimed(claim: ClaimOf): SQL {
    return and(
      this.keyOf(claim),
      eq(workflowEffects.state, 'pending'),
      eq(workflowEffects.attempts, claim.attempts),
    )!;
  }

  private keyOf(key: EffectKeyOf): SQL {
    return and(
      eq(workflowEffects.runId, key.runId),
      eq(workflowEffects.stepIndex, key.stepIndex),
      eq(workflowEffects.effectIndex, key.effectIndex),
    )!;
  }
}
