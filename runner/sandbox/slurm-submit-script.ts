/**
 * What sbatch says when slurmctld could not be reached or could not take the job yet: a
 * submission that failed so is tried again (SLURM_SUBMIT_SCRIPT). Any other error is a
 * refusal, reported as the stage's.
 */
export const SBATCH_UNREACHABLE_ERRORS = [
  'Unable to contact slurm controller',
  'Socket timed out on send/recv operation',
  'Slurm temporarily unable to accept job',
] as const;

/**
 * What is added to a stage's job file's name for the file that keeps its submission's
 * marker from before sbatch runs until the job's id is kept (SLURM_SUBMIT_SCRIPT's
 * `find_submitted_job`).
 */
export const SUBMITTING_SUFFIX = '.submitting';

/** How many times a stage's job is submitted while slurmctld cannot be reached. */
export const SUBMIT_TRIES = 10;
/** The wait before the second try, doubling after each, in milliseconds, up to SUBMIT_MAX_WAIT_MS. */
export const SUBMIT_FIRST_WAIT_MS = 500;
export const SUBMIT_MAX_WAIT_MS = 30_000;

/**
 * Bash functions of the attach script (slurm-attach-script.ts) that submit a stage's job.
 *
 * `submit_job MARKER SBATCH_ARGS…` runs `sbatch --parsable --comment=MARKER`, the job's
 * output going to `$out` and `$err`, and keeps the job's id in `$job` and `$job_file`.
 * MARKER is unique to the launch (`fluksio:RUN:STAGE:NONCE`). While sbatch fails because
 * slurmctld cannot be reached (SBATCH_UNREACHABLE_ERRORS), it tries again, up to
 * SUBMIT_TRIES times, waiting SUBMIT_FIRST_WAIT_MS and twice as long each time after, at
 * most SUBMIT_MAX_WAIT_MS. An sbatch that timed out may still have queued the job, so before
 * each retry `squeue` is asked for a job carrying MARKER, which is adopted rather than
 * submitted twice; a squeue that cannot answer is asked again before anything is
 * submitted. Any other failure, or the last try's (unless it queued the job all the same; its marker is kept when squeue cannot say), is sbatch's refusal: its errors go to
 * stderr and, joined, to the `refused` report, and the script exits 1. A cancel (SIGINT,
 * SIGTERM) while it waits cancels a job found with MARKER and exits 130.
 *
 * It uses the attach script's `note`, `report_job`, `cancel`, `parent`, `job_file`, `out`
 * and `err`.
 */
export const SLURM_SUBMIT_SCRIPT = `
sbatch_unreachable() {
  local each
  for each in ${SBATCH_UNREACHABLE_ERRORS.map((error) => `'${error}'`).join(' ')}; do
    [[ $1 == *"$each"* ]] && return 0
  done
  return 1
}
# The id of the job whose comment is $1, or nothing when squeue lists none; 1 when squeue failed.
job_with_marker() {
  local out line
  out=$(squeue --noheader --states=all --format='%i|%k' 2>/dev/null) || return 1
  while IFS= read -r line; do
    if [ "\${line#*|}" = "$1" ]; then
      printf '%s' "\${line%%|*}"
      return 0
    fi
  done <<<"$out"
  return 0
}
submit_nap() {
  sleep "$(($1 / 1000)).$(printf %03d $(($1 % 1000)))" &
  wait $!
}
# Leaves at a cancel or once the runner died, a job already queued with marker $1 cancelled.
submit_stopped() {
  local found
  if [ "$cancel" != 0 ]; then
    found=$(job_with_marker "$1") && [ -n "$found" ] && scancel "$found" 2>/dev/null
    rm -f "$job_file${SUBMITTING_SUFFIX}"
    note "cancelled before Slurm took the job"
    exit 130
  fi
  kill -0 "$parent" 2>/dev/null || exit 1
}
# A submission's marker kept in JOB_FILE${SUBMITTING_SUFFIX} without a job id: the process
# that ran sbatch died before it kept the job's id. The job file is set to the id of the job squeue
# lists with that marker, and the marker removed, asking again (backing off) while squeue
# fails: the stage is never submitted a second time because squeue did not answer.
find_submitted_job() {
  local kept found
  [ -s "$job_file${SUBMITTING_SUFFIX}" ] || return 0
  if [ -s "$job_file" ]; then
    rm -f "$job_file${SUBMITTING_SUFFIX}"
    return 0
  fi
  kept=$(<"$job_file${SUBMITTING_SUFFIX}")
  while :; do
    if [ "$cancel" != 0 ]; then
      found=$(job_with_marker "$kept") && [ -n "$found" ] && scancel "$found" 2>/dev/null
      rm -f "$job_file${SUBMITTING_SUFFIX}"
      note "cancelled before the stage was submitted again"
      exit 130
    fi
    kill -0 "$parent" 2>/dev/null || exit 1
    if found=$(job_with_marker "$kept"); then break; fi
    if [ -z "$unreadable" ]; then
      unreadable=1
      note "squeue failed: asking again whether the last sbatch queued the job (comment $kept) before submitting the stage again"
    fi
    nap
    delay_ms=$((delay_ms * 2))
    if [ "$delay_ms" -gt 5000 ]; then delay_ms=5000; fi
  done
  answered
  if [ -n "$found" ]; then
    note "found Slurm job $found, which sbatch had queued before its id was kept (comment $kept)"
    printf '%s\\n' "$found" >"$job_file"
  fi
  rm -f "$job_file${SUBMITTING_SUFFIX}"
}
submit_job() {
  local marker=$1 tries=0 wait_ms=${SUBMIT_FIRST_WAIT_MS} found errors refusal line unsure=''
  shift
  : >"$out"
  : >"$err"
  # Kept until the job's id is: should this process die once sbatch queued the job and
  # before its id is kept, the next launch finds the job by it (find_submitted_job).
  printf '%s\\n' "$marker" >"$job_file${SUBMITTING_SUFFIX}"
  while :; do
    if [ "$tries" -gt 0 ]; then
      if ! found=$(job_with_marker "$marker"); then
        note "squeue failed: asking again whether the failed sbatch queued the job before submitting it again"
        submit_nap "$wait_ms"
        submit_stopped "$marker"
        continue
      fi
      if [ -n "$found" ]; then
        job=$found
        note "adopted Slurm job $job, which the failed sbatch had queued (comment $marker)"
        break
      fi
    fi
    # sbatch reads % in these as a pattern (%j the job id): a path with one is written %%.
    if job=$(sbatch --parsable --comment="$marker" --output="\${out//%/%%}" --error="\${err//%/%%}" "$@" 2>"$job_file.sbatch"); then
      cat "$job_file.sbatch" >&2
      job=$(cut -d";" -f1 <<<"$job")
      note "submitted Slurm job $job"
      break
    fi
    errors=$(cat "$job_file.sbatch")
    tries=$((tries + 1))
    submit_stopped "$marker"
    if sbatch_unreachable "$errors" && [ "$tries" -lt ${SUBMIT_TRIES} ]; then
      printf '%s\\n' "$errors" >&2
      note "sbatch could not reach slurmctld (try $tries of ${SUBMIT_TRIES}): trying again in $((wait_ms / 1000)).$((wait_ms % 1000 / 100)) s"
      submit_nap "$wait_ms"
      wait_ms=$((wait_ms * 2))
      if [ "$wait_ms" -gt ${SUBMIT_MAX_WAIT_MS} ]; then wait_ms=${SUBMIT_MAX_WAIT_MS}; fi
      submit_stopped "$marker"
      continue
    fi
    # The last try timed out: it may have queued the job all the same. Should squeue fail
    # too, the marker is kept so that the next launch, or the cancel of the attempt's jobs,
    # finds that job if there is one.
    if sbatch_unreachable "$errors"; then
      if ! found=$(job_with_marker "$marker"); then
        unsure=1
      elif [ -n "$found" ]; then
        job=$found
        note "adopted Slurm job $job, which the failed sbatch had queued (comment $marker)"
        break
      fi
    fi
    refusal=''
    while IFS= read -r line; do
      printf '%s\\n' "$line" >&2
      [[ $line == 'sbatch: error: '* ]] && refusal+="\${refusal:+; }\${line#sbatch: error: }"
    done <"$job_file.sbatch"
    rm -f "$job_file.sbatch"
    if [ -n "$unsure" ]; then
      note "squeue failed: kept the marker of a job the last sbatch may have queued (comment $marker)"
    else
      rm -f "$job_file${SUBMITTING_SUFFIX}"
    fi
    note "sbatch failed"
    report_job refused "\${refusal:-sbatch exited without saying why}"
    exit 1
  done
  rm -f "$job_file.sbatch"
  printf '%s\\n' "$job" >"$job_file"
  rm -f "$job_file${SUBMITTING_SUFFIX}"
}
`;
