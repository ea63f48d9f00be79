import { shellQuote } from '../../core/pipeline/interpolate-command.js';
import { DEFAULT_LOG_LIMIT } from '../../schemas/log-limit.js';

/** The most bytes of the end of a stream past the limit that the job still writes, as LogTail keeps. */
export const CAPPED_TAIL_BYTES = 64 * 1024;

/**
 * Reads a stream line by line (LC_ALL=C: lengths in bytes) and writes it on, flushed line
 * by line for the live log, up to `limit` bytes; past it, says so once and writes only the
 * workflow commands (`::metric`, `::error`: results, up to `limit` bytes more), keeping the
 * newest lines dropped (`tailmax` bytes) to write with a count of the rest once the stream
 * ends: a traceback is at the end. The ring's indexes start as numbers: an unset `first` is
 * the subscript "", not "0", so the first line dropped would stay in memory, miscounted,
 * and a long one (a progress bar redrawn with \r) pushed every later line out of the tail.
 */
const BOUNDED_WRITER = `
BEGIN { first = 0; last = 0 }
{
  size = length($0) + 1
  if (!over) {
    if (used + size <= limit) { print; fflush(); used += size; next }
    over = 1
    print "fluksio: this stream reached the log limit of " limit " bytes (log_limit): the rest is not written to the job's output file; its ::metric and other workflow commands still are, and its last lines once it ends"
    fflush()
  }
  if (substr($0, 1, 2) == "::" && commands + size <= limit) { print; fflush(); commands += size; next }
  dropped += size; droppedLines++
  ring[last++] = $0; ringBytes += size
  while (ringBytes > tailmax && first < last) { ringBytes -= length(ring[first]) + 1; delete ring[first]; first++ }
}
END {
  if (over) {
    print "fluksio: dropped " (dropped - ringBytes) " bytes (" (droppedLines - (last - first)) " lines) past the log limit; the last lines follow"
    for (i = first; i < last; i++) print ring[i]
  }
}
`;

/**
 * Runs `/bin/sh -c cmd` with each of its stdout and stderr through the bounded writer, and
 * exits as it exits once both writers wrote their last lines (bash ≥ 4.4 waits for a
 * process substitution).
 */
const CAPPED_RUNNER = `
limit=$1 tailmax=$2 program=$3 cmd=$4
exec 3>&1 4>&2
exec > >(LC_ALL=C awk -v limit="$limit" -v tailmax="$tailmax" "$program" >&3)
out_writer=$!
exec 2> >(LC_ALL=C awk -v limit="$limit" -v tailmax="$tailmax" "$program" >&4)
err_writer=$!
/bin/sh -c "$cmd"
code=$?
exec >&3 2>&4
wait "$out_writer" "$err_writer"
exit "$code"
`;

/**
 * The body of a stage's Slurm job (sbatch `--wrap`): `cmd`, its output bounded at the source.
 * The job writes to files on the cluster's shared file system (`--output`, `--error`) that
 * the runner follows: capping only what the runner forwards would let a stage printing
 * forever fill that file system. Each file keeps at most `limit` bytes of plain output (the
 * stage's log limit), the workflow commands past it (so metrics keep arriving), and the
 * last 64 KiB of the stream with a line counting what was dropped.
 */
export function cappedJobScript(cmd: string, limit: number = DEFAULT_LOG_LIMIT): string {
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new Error(`limit must be a positive integer, got ${limit}`);
  const words = [
    CAPPED_RUNNER,
    'fluksio-stage',
    String(limit),
    String(CAPPED_TAIL_BYTES),
    BOUNDED_WRITER,
    cmd,
  ];
  return `exec /bin/bash -c ${words.map(shellQuote).join(' ')}`;
}
