import type { RunReport } from '../schemas/run-report.js';
import { oneLine, type WorkflowLog } from './workflow-log.js';

/**
 * Puts each failed stage in the job's annotations (`::error file=…,line=…::`), at the
 * line its traceback points to when one was found. Only failures are annotated this way:
 * what a stage printed as `::error::` or `::warning::` reaches the check run's
 * annotations, never the workflow as a command.
 */
export function reportFailures(log: WorkflowLog, report: RunReport): void {
  for (const stage of report.stages) {
    if (stage.status !== 'failed' && stage.status !== 'timed_out') continue;
    const error = stage.error ?? stage.status;
    // The stage's error ends with its last traceback's message; that traceback's annotation knows the line.
    const where = report.annotations.find(
      (note) =>
        note.stage === stage.name && note.level === 'error' && note.path && error.endsWith(note.message),
    );
    log.annotate(
      'error',
      oneLine(`Stage ${stage.name} ${stage.status === 'failed' ? 'failed' : 'timed out'}: ${error}`),
      {
        title: `fluksio: ${stage.name}`,
        ...(where?.path ? { file: where.path } : {}),
        ...(where?.line ? { line: where.line } : {}),
      },
    );
  }
}
