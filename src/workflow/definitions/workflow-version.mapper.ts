import { isDeepStrictEqual } from 'node:util';
import {
  WORKFLOW_PARTS,
  type WorkflowPart,
  type WorkflowVersionDto,
  type WorkflowVersionSummaryDto,
} from '../dto/workflow-version.dto';
import { definitionPartsOf } from '../workflow.mapper';
import type { WorkflowVersionRow } from './workflows.repository';

/** Versions newest first, each with the parts that differ from the version before it. */
export function toVersionSummaries(newestFirst: WorkflowVersionRow[]): WorkflowVersionSummaryDto[] {
  return newestFirst.map((row, index) => {
    const before = newestFirst[index + 1];
    return {
      version: row.version,
      savedBy: row.savedBy,
      savedAt: row.savedAt.toISOString(),
      changed: before ? changedParts(before, row) : null,
    };
  });
}

export function toVersionResponse(row: WorkflowVersionRow): WorkflowVersionDto {
  return {
    workflowId: row.workflowId,
    version: row.version,
    savedBy: row.savedBy,
    savedAt: row.savedAt.toISOString(),
    ...definitionPartsOf(row),
    authorId: row.authorId,
  };
}

function changedParts(before: WorkflowVersionRow, after: WorkflowVersionRow): WorkflowPart[] {
  return WORKFLOW_PARTS.filter((part) => !isDeepStrictEqual(before[part], after[part]));
}
