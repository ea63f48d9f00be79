import {
  REQUEUED_END,
  REQUEUED_EXIT_CODE,
  SLURM_END_STATES,
  UNKNOWN_JOB_END,
  UNKNOWN_JOB_EXIT_CODE,
} from './slurm-exit-causes.js';
import { SLURM_JOB_STATE_SCRIPT } from './slurm-job-state-script.js';
import { SLURM_SUBMIT_SCRIPT, SUBMITTING_SUFFIX } from './slurm-submit-script.js';
import {
  UNSTARTABLE_EXIT_CODE,
  UNSTARTABLE_JOB_FIELDS,
  UNSTARTABLE_PARTITION_FIELDS,
  UNSTARTABLE_REASON_PATTERN,
} from './slurm-unstartable.js';

/** `CANCELLED | TIMEOUT | …`: the states in which Slurm, not the job's command, ended the job. */
const slurmEndStates = Object.keys(SLURM_END_STATES).join(' | ');

/**
 * The program the Slurm launcher starts for each stage (`bash -c ATTACH_SCRIPT`), with
 * arguments `JOB_FILE OUT_FILE ERR_FILE UNKNOWN_GRACE_MS UNSTARTABLE_GRACE_MS MARKER SUPERSEDED SBATCH_ARGS…`.
 * It submits the job (`submit_job`, slurm-submit-script.ts: `sbatch --parsable
 * --comment=MARKER`, tried again while slurmctld cannot be reached, adopting a job an sbatch
 * that timed out queued all the same), or re-attaches to the one named in JOB_FILE when Slurm still
 * knows it (a runner restarted mid-run), keeps the job's id there, copies what the job
 * writes to its output files to its own stdout and stderr as they grow, says why the job
 * is pending, and exits with the job's exit code. SIGINT or SIGTERM cancels the job
 * (`scancel`) and waits until Slurm says it is over. A job that Slurm ended exits with
 * one of SLURM_END_STATES' codes; a requeued job is cancelled and exits with
 * REQUEUED_EXIT_CODE, so the run can be tried again. A job sbatch refuses (a partition that
 * does not exist, more than any node has) exits 1 after its errors, reported (`refused`)
 * so that they are the stage's. When it is over, the job's id is in
 * `JOB_FILE.ended`, for what it used.
 *
 * Besides its log lines it reports the job on file descriptor 3, one line at a time
 * (job-status-line.ts): `job ID` once it follows the job and whenever it runs, `pending ID
 * REASON` when Slurm's reason for keeping it waiting changes, and `ended ID CAUSE` just
 * before it exits when Slurm ended the job (CAUSE a SLURM_END_STATES state as Slurm said
 * it, REQUEUED_END or UNKNOWN_JOB_END), `unstartable ID REASON FACT…` just before it exits
 * with UNSTARTABLE_EXIT_CODE, or `refused TEXT` when sbatch would not queue the job, TEXT
 * its errors. The launcher names the cause from that line alone:
 * a job's own command can exit with any of the codes, but cannot write to this descriptor.
 *
 * State is read with `read_job_state` (slurm-job-state-script.ts): squeue, then sacct,
 * then scontrol. When none can answer, it says so once and asks again, backing off from
 * 0.2 s to 5 s: a failure is never taken for "no such job", so a re-attach never submits
 * the stage a second time because slurmctld was busy. A job every source stopped knowing
 * (purged from slurmctld's memory before its end was seen, on a cluster without
 * accounting) ends the stage with UNKNOWN_JOB_EXIT_CODE once UNKNOWN_GRACE_MS passed.
 *
 * So does a kept job id no source knows when the stage re-attaches: a slurmctld that just
 * restarted may answer "Invalid job id" for a job it is still recovering. Only once no
 * source knew it for UNKNOWN_GRACE_MS is the stage submitted again, and only after the old
 * id was cancelled (`scancel`) and Slurm no longer says it runs: should the job come back
 * to Slurm's knowledge late, two copies of the stage never run at once.
 *
 * A submission's marker kept without a job id (`JOB_FILE.submitting`: the attach process
 * died after running sbatch and before keeping the job's id) is resolved before that
 * (`find_submitted_job`): the job squeue lists with that comment is re-attached to, so a
 * job sbatch queued just before its runner was killed is neither left running unwatched
 * nor submitted a second time.
 *
 * Before it submits, when SUPERSEDED is not empty (`fluksio:RUN:STAGE:`, a resumed attempt:
 * supersededMarkerPrefix), every job of the stage's earlier launches in the run that Slurm
 * still runs or queues is cancelled and waited out (`retire_superseded_jobs`), with a line
 * naming it: a runner restarted with another PATH keys the stage anew, so it does not
 * re-attach to the job it submitted before, which would otherwise write the same outs as
 * the new one until the attempt ends.
 *
 * A job pending for a reason that never clears (UNSTARTABLE_REASON_PATTERN: it asks for
 * more than its partition allows, an account it may not use) for UNSTARTABLE_GRACE_MS is
 * cancelled: what scontrol says of it and of its partition is reported (`unstartable`, the
 * stage's error names the limit it exceeds) once Slurm says it is cancelled. A job that
 * started meanwhile ends as it ends.
 */
export const ATTACH_SCRIPT = `
set -u
job_file=$1 out=$2 err=$3 unknown_grace_ms=$4 unstartable_grace_ms=$5 marker=$6 superseded=$7
shift 7
parent=$PPID
cancel=0
trap 'cancel=1' INT TERM
${SLURM_JOB_STATE_SCRIPT}
${SLURM_SUBMIT_SCRIPT}
note() { printf 'fluksio: %s\\n' "$*" >&2; }
report_job() { { printf '%s\\n' "$*" >&3; } 2>/dev/null; }
now_ms() {
  local micros=\${EPOCHREALTIME/[.,]/}
  echo $((micros / 1000))
}
delay_ms=200
nap() {
  sleep "$((delay_ms / 1000)).$(printf %03d $((delay_ms % 1000)))" &
  wait $!
}
unreadable=''
answered() {
  unreadable=''
  delay_ms=200
}
grace_text() {
  local ms=\${1:-$unknown_grace_ms}
  echo "$((ms / 1000)).$((ms % 1000 / 100)) s"
}
unstartable_re='${UNSTARTABLE_REASON_PATTERN}'
# What scontrol says of job $1 and its partition, as job.FIELD=VALUE and partition.FIELD=VALUE words.
unstartable_facts() {
  local line field value facts='' partition
  line=$(scontrol show job -o "$1" 2>/dev/null)
  for field in ${UNSTARTABLE_JOB_FIELDS.join(' ')}; do
    value=$(scontrol_field "$field" "$line") && facts+=" job.$field=$value"
  done
  partition=$(scontrol_field Partition "$line")
  if [[ $partition =~ ^[A-Za-z0-9_.-]+$ ]]; then
    line=$(scontrol show partition -o "$partition" 2>/dev/null)
    for field in ${UNSTARTABLE_PARTITION_FIELDS.join(' ')}; do
      value=$(scontrol_field "$field" "$line") && facts+=" partition.$field=$value"
    done
  fi
  printf '%s' "$facts"
}
# Cancels job $1 for good before the stage is submitted again: returns 0 once Slurm took
# the cancel (or does not know the job) and no longer says it runs, 1 when it could not be
# asked (slurmctld unreachable), so the stage is not submitted yet.
retire_job() {
  local out known
  if ! out=$(scancel "$1" 2>&1) && [[ $out != *'Invalid job id'* ]]; then return 1; fi
  while :; do
    read_job_state "$1"
    known=$?
    [ "$known" = 0 ] || break
    [ -n "$(final_exit_code "$job_state" "$job_exit" 1)" ] && return 0
    [ "$cancel" != 0 ] && return 1
    kill -0 "$parent" 2>/dev/null || exit 1
    nap
  done
  [ "$known" = 1 ]
}
# Before the stage is submitted in a resumed attempt: cancels each job squeue lists whose
# comment is $1 (fluksio:RUN:STAGE:) and a nonce and that is not over, an earlier launch of
# the stage that this one does not re-attach to (its key changed with the runner's restart),
# says so, and returns once Slurm says each is over (no longer completing either), forgetting
# the job files that name it. Asks again while squeue fails: two jobs of a stage never run
# at once in its checkout.
retire_superseded_jobs() {
  local out id state comment live said=' ' file
  while :; do
    if [ "$cancel" != 0 ]; then
      note "cancelled before the stage was submitted"
      exit 130
    fi
    kill -0 "$parent" 2>/dev/null || exit 1
    if out=$(squeue --noheader --states=all --format='%i|%T|%k' 2>/dev/null); then
      answered
      live=''
      while IFS='|' read -r id state comment; do
        [[ $comment == "$1"* && \${comment#"$1"} =~ ^[0-9a-f]+$ ]] || continue
        [ -n "$(final_exit_code "$state" 0:0 1)" ] && continue
        live+=" $id"
        # Asked again each time: a scancel slurmctld did not take is no failure of the stage.
        scancel "$id" 2>/dev/null
        if [[ $said != *" $id "* ]]; then
          said+="$id "
          note "cancelling Slurm job $id ($state, comment $comment): an earlier launch of this stage in this run that the runner, restarted, does not re-attach to (the stage's key changed: its PATH, interpreter or fingerprint); the stage is submitted once it is over, never twice at once"
          # No later launch re-attaches to it: its kept id, or submission marker, goes.
          for file in "\${job_file%/*}"/*.job "\${job_file%/*}"/*.job${SUBMITTING_SUFFIX}; do
            case $(cat "$file" 2>/dev/null) in
              "$id" | "$comment") rm -f "$file" ;;
            esac
          done
        fi
      done <<<"$out"
      if [ -z "$live" ]; then
        for id in $said; do note "cancelled Slurm job $id: it is over"; done
        return 0
      fi
    elif [ -z "$unreadable" ]; then
      unreadable=1
      note "squeue failed: asking again for the jobs of this stage still running before submitting it"
    fi
    nap
    if [ -n "$unreadable" ]; then
      delay_ms=$((delay_ms * 2))
      if [ "$delay_ms" -gt 5000 ]; then delay_ms=5000; fi
    fi
  done
}
unanswered() {
  # A cancel's SIGINT reaches the query too: that is no failure to speak of.
  if [ -z "$unreadable" ] && [ "$cancel" = 0 ]; then
    unreadable=1
    note "could not read the state of Slurm job $job (squeue, sacct and scontrol all failed): asking again"
  fi
  delay_ms=$((delay_ms * 2))
  if [ "$delay_ms" -gt 5000 ]; then delay_ms=5000; fi
}
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
job=''
unknown_since=''
find_submitted_job
if [ -s "$job_file" ]; then
  job=$(cat "$job_file")
  while :; do
    if [ "$cancel" != 0 ]; then
      scancel "$job" 2>/dev/null
      note "cancelled Slurm job $job"
      finish 130
    fi
    kill -0 "$parent" 2>/dev/null || exit 1
    read_job_state "$job"
    case $? in
      0)
        answered
        note "re-attached to Slurm job $job"
        break ;;
      1)
        answered
        if [ -z "$unknown_since" ]; then
          unknown_since=$(now_ms)
          note "Slurm does not know job $job: asking again for up to $(grace_text) before submitting the stage again"
        elif [ $(($(now_ms) - unknown_since)) -ge "$unknown_grace_ms" ]; then
          if retire_job "$job"; then
            note "Slurm no longer knows job $job: not in squeue, sacct or scontrol for $(grace_text); cancelled it, submitting the stage again"
            job=''
            break
          fi
          unanswered
        fi ;;
      *) unanswered ;;
    esac
    nap
  done
fi
if [ -z "$job" ]; then
  [ -n "$superseded" ] && retire_superseded_jobs "$superseded"
  submit_job "$marker" "$@"
fi
report_job job "$job"
said=''
restarts=''
unknown_since=''
unstartable_since=''
unstartable=''
while :; do
  if [ "$cancel" = 1 ]; then
    cancel=2
    scancel "$job" 2>/dev/null
    note "cancelled Slurm job $job"
  fi
  # The runner died (kill -9): leave the job, and its id, to the runner that starts next.
  kill -0 "$parent" 2>/dev/null || exit 1
  read_job_state "$job"
  case $? in
    0)
      answered
      unknown_since=''
      if [ -n "$job_restarts" ]; then
        if [ -z "$restarts" ]; then
          restarts=$job_restarts
        elif [ "$job_restarts" != "$restarts" ] && [ "$cancel" = 0 ]; then
          scancel "$job" 2>/dev/null
          note "Slurm requeued job $job: giving the run back for a retry"
          report_job ended "$job" ${REQUEUED_END}
          finish ${REQUEUED_EXIT_CODE}
        fi
      fi
      case $job_state in
        PENDING | REQUEUED | REQUEUE_HOLD | REQUEUE_FED)
          if [ -n "$job_reason" ] && [ "$job_reason" != None ] && [ "$said" != "pending: $job_reason" ]; then
            said="pending: $job_reason"
            note "pending: $job_reason (Slurm job $job)"
            report_job pending "$job" "$job_reason"
          fi
          if [ -n "$unstartable" ]; then
            scancel "$job" 2>/dev/null
          elif [ "$cancel" = 0 ] && [[ $job_reason =~ $unstartable_re ]]; then
            [ -z "$unstartable_since" ] && unstartable_since=$(now_ms)
            if [ $(($(now_ms) - unstartable_since)) -ge "$unstartable_grace_ms" ]; then
              unstartable="\${job_reason%%,*}$(unstartable_facts "$job")"
              note "Slurm would never start job $job (pending: $job_reason for $(grace_text "$unstartable_grace_ms")): cancelling it"
              scancel "$job" 2>/dev/null
            fi
          else
            unstartable_since=''
          fi ;;
        *)
          code=$(final_exit_code "$job_state" "$job_exit" "$cancel")
          if [ -n "$code" ] && [ -n "$unstartable" ] && [ "$job_state" = CANCELLED ] && [ "$cancel" = 0 ]; then
            report_job unstartable "$job" "$unstartable"
            finish ${UNSTARTABLE_EXIT_CODE}
          fi
          if [ -n "$code" ]; then
            # A cancel of fluksio's own is the run's, not Slurm's doing.
            case $job_state in
              ${slurmEndStates})
                if [ "$job_state" != CANCELLED ] || [ "$cancel" = 0 ]; then
                  report_job ended "$job" "$job_state"
                fi ;;
            esac
            finish "$code"
          fi
          if [ "$said" != running ]; then
            said=running
            report_job job "$job"
            note "Slurm job $job running on $job_nodes"
          fi ;;
      esac ;;
    1)
      answered
      if [ "$cancel" != 0 ]; then finish 130; fi
      [ -z "$unknown_since" ] && unknown_since=$(now_ms)
      if [ $(($(now_ms) - unknown_since)) -ge "$unknown_grace_ms" ]; then
        # Should only the queries have lost it, a job nobody follows must not hold its node.
        scancel "$job" 2>/dev/null
        note "Slurm no longer knows job $job: not in squeue, sacct or scontrol for $(grace_text)"
        report_job ended "$job" ${UNKNOWN_JOB_END}
        finish ${UNKNOWN_JOB_EXIT_CODE}
      fi ;;
    *) unanswered ;;
  esac
  pump
  nap
done
`;
