/**
 * The program the Slurm launcher starts for each stage (`bash -c ATTACH_SCRIPT`), with
 * arguments `JOB_FILE OUT_FILE ERR_FILE SBATCH_ARGS…`. It submits the job (`sbatch
 * --parsable`), or re-attaches to the one named in JOB_FILE when Slurm still knows it (a
 * runner restarted mid-run), keeps the job's id there, copies what the job writes to
 * its output files to its own stdout and stderr as they grow, reports why the job is
 * pending, and exits with the job's exit code. SIGINT or SIGTERM cancels the job
 * (`scancel`) and waits until Slurm says it is over. A job that Slurm ended exits with
 * one of SLURM_EXIT_CODES (the launcher names the cause); a requeued job is cancelled and
 * exits with REQUEUED_EXIT_CODE, so the run can be tried again. When it is over, the job's
 * id is in `JOB_FILE.ended`, for what it used.
 *
 * State comes from `scontrol show job` alone: it knows a finished job (for MinJobAge)
 * with its exit code, where `squeue` has forgotten it, and `sacct` needs accounting
 * storage that many clusters (and CI) lack.
 */
export const ATTACH_SCRIPT = String.raw`
set -u
job_file=$1 out=$2 err=$3
shift 3
parent=$PPID
cancel=0
trap 'cancel=1' INT TERM
note() { printf 'fluksio: %s\n' "$*" >&2; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $info"; }
job=""
if [ -s "$job_file" ]; then
  job=$(cat "$job_file")
  if scontrol show job "$job" >/dev/null 2>&1; then
    note "re-attached to Slurm job $job"
  else
    job=""
  fi
fi
if [ -z "$job" ]; then
  : >"$out"
  : >"$err"
  job=$(sbatch --parsable --output="$out" --error="$err" "$@") || { note "sbatch failed"; exit 1; }
  job=$(cut -d";" -f1 <<<"$job")
  printf '%s\n' "$job" >"$job_file"
  note "submitted Slurm job $job"
fi
out_at=0
err_at=0
pump() {
  local size
  size=$(stat -c %s "$out" 2>/dev/null || echo 0)
  if [ "$size" -gt "$out_at" ]; then
    tail -c +"$((out_at + 1))" "$out" | head -c "$((size - out_at))"
    out_at=$size
  fi
  size=$(stat -c %s "$err" 2>/dev/null || echo 0)
  if [ "$size" -gt "$err_at" ]; then
    tail -c +"$((err_at + 1))" "$err" | head -c "$((size - err_at))" >&2
    err_at=$size
  fi
}
finish() {
  pump
  # The id moves aside: the next launch of the stage submits anew, and the launcher reads
  # what the job used from it.
  mv -f "$job_file" "$job_file.ended"
  exit "$1"
}
said=""
restarts=""
while :; do
  if [ "$cancel" = 1 ]; then
    cancel=2
    scancel "$job" 2>/dev/null
    note "cancelled Slurm job $job"
  fi
  # The runner died (kill -9): leave the job, and its id, to the runner that starts next.
  kill -0 "$parent" 2>/dev/null || exit 1
  info=$(scontrol show job -o "$job" 2>/dev/null)
  state=$(field JobState)
  if [ -n "$state" ]; then
    now=$(field Restarts)
    if [ -z "$restarts" ]; then
      restarts=$now
    elif [ "$now" != "$restarts" ] && [ "$cancel" = 0 ]; then
      scancel "$job" 2>/dev/null
      note "Slurm requeued job $job: giving the run back for a retry"
      finish 75
    fi
    case $state in
      PENDING | REQUEUED | REQUEUE_HOLD | REQUEUE_FED)
        reason=$(field Reason)
        if [ "$reason" != "None" ] && [ "$said" != "pending: $reason" ]; then
          said="pending: $reason"
          note "pending: $reason (Slurm job $job)"
        fi ;;
      COMPLETED | FAILED)
        code=$(field ExitCode)
        status=$(cut -d: -f1 <<<"$code")
        sig=$(cut -d: -f2 <<<"$code")
        if [ "$sig" != 0 ]; then finish $((128 + sig)); fi
        if [ "$state" = FAILED ] && [ "$status" = 0 ]; then finish 1; fi
        finish "$status" ;;
      CANCELLED)
        if [ "$cancel" != 0 ]; then finish 130; fi
        finish 210 ;;
      TIMEOUT) finish 211 ;;
      OUT_OF_MEMORY) finish 212 ;;
      NODE_FAIL) finish 213 ;;
      PREEMPTED) finish 214 ;;
      BOOT_FAIL) finish 215 ;;
      DEADLINE) finish 216 ;;
      *)
        if [ "$said" != running ]; then
          said=running
          note "Slurm job $job running on $(field NodeList)"
        fi ;;
    esac
  elif [ "$cancel" != 0 ]; then
    finish 130
  fi
  pump
  sleep 0.2 &
  wait $!
done
`;

/** The exit code of a job Slurm requeued (or preempted back into its queue): try the run again. */
export const REQUEUED_EXIT_CODE = 75;
/** The exit code of a job Slurm preempted and did not requeue. */
const PREEMPTED_EXIT_CODE = 214;

/**
 * Jobs whose end is no fault of the run (requeued, preempted): the run goes back to the
 * queue for another attempt, where the stages already finished come from the cache.
 */
export const GIVEN_BACK_EXIT_CODES: readonly number[] = [REQUEUED_EXIT_CODE, PREEMPTED_EXIT_CODE];

/** The exit codes of jobs Slurm ended itself, by the cause the stage's error names. */
export const SLURM_EXIT_CODES: Readonly<Record<number, string>> = {
  210: 'Slurm cancelled the job (scancel from outside fluksio)',
  211: 'Slurm ended the job: TIMEOUT (it ran past its time limit)',
  212: 'Slurm ended the job: OUT_OF_MEMORY (it used more than its memory)',
  213: 'Slurm ended the job: NODE_FAIL (its node failed)',
  [PREEMPTED_EXIT_CODE]: 'Slurm ended the job: PREEMPTED',
  215: 'Slurm ended the job: BOOT_FAIL (its node did not boot)',
  216: 'Slurm ended the job: DEADLINE',
  [REQUEUED_EXIT_CODE]: 'Slurm requeued the job',
};
