import { sql, type SQL } from 'drizzle-orm';
import { dataRecords } from '../database/schema';

/**
 * The statement that appends one entry to a record's `workflow` log (an atomic append, no
 * read-modify-write); `dataId` and `entryJson` are values or placeholders. The SQL of the records
 * table stays here; the workflow module runs it inside the statement that ends a run (as a
 * data-modifying CTE), so a run's end and its entry on the record are one write. The usual end,
 * migration 0016's `fdws_finish_run`, appends the same entry in SQL of its own.
 */
export function appendToWorkflowLog(dataId: unknown, entryJson: unknown): SQL {
  return sql`update ${dataRecords}
    set ${sql.identifier(dataRecords.workflow.name)} = coalesce(${dataRecords.workflow}, '[]'::jsonb) || jsonb_build_array(${entryJson}::jsonb)
    where ${dataRecords.id} = ${dataId}::uuid`;
}
