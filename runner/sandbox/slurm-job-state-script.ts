import { SLURM_END_STATES, SLURM_FINAL_STATES } from './slurm-exit-causes.js';

/** `TIMEOUT) echo 211 ;;` for each end state but CANCELLED, whose code depends on who cancelled. */
const endCases = Object.entries(SLURM_END_STATES)
  .filter(([state]) => state !== 'CANCELLED')
  .map(([state, end]) => `    ${state}) echo ${end.code} ;;`)
  .join('\n');

/**
 * Bash functions that read a Slurm job's state robustly (issue 12), part of the attach
 * script (slurm-attach-script.ts) and tested on their own. They use no command but
 * squeue, sacct and scontrol, so a test can stand in for each.
 *
 * `read_job_state JOB` sets `job_state`, `job_reason`, `job_exit` (`status:signal`),
 * `job_nodes` and `job_restarts` from the first source that knows the job: `squeue`
 * (the live queue, and finished jobs while slurmctld keeps them, MinJobAge), then `sacct`
 * (the accounting database, which keeps jobs long after; a cluster without one answers
 * nothing), then `scontrol show job`. A job squeue says FAILED takes its exit code from
 * the next source that has one, scontrol's over a FAILED record's: sacct (22.05) gives a
 * code past 127 as that less 128 (`exit 137` reads 9:0, 128 reads 0:0), so the
 * accounting's code is read only for a job slurmctld no longer knows. It returns 0 when a source knows the job; 1 when the
 * sources that answered do not know it (`Invalid job id`, or no accounting line); 2 when
 * none could answer (slurmctld unreachable, a command missing): a transient failure,
 * never to be read as "no such job".
 *
 * sacct is believed only about a job that is over (SLURM_FINAL_STATES, its End recorded,
 * with a `status:signal` exit code; isFinalSlurmRecord): slurmctld sends a job's end to
 * slurmdbd after the job ended, so a record still PENDING or RUNNING, or FAILED with End
 * `Unknown`, may be one whose end has not arrived. Such a record is the answer only when
 * slurmctld could not be asked (squeue and scontrol failed); when slurmctld no longer
 * knows the job, it is no sign of life (1, not 0). A job squeue says FAILED whose exit
 * code neither scontrol nor a final record gives is asked about again (2) rather than
 * given one, unless slurmctld forgot it in between.
 *
 * `final_exit_code STATE EXIT CANCELLED` prints the attach process's exit code for a job
 * over (the command's own code, 128 + a signal, or SLURM_END_STATES' code; 130 for a job
 * fluksio cancelled itself, CANCELLED not 0), and nothing for a job not over.
 */
export const SLURM_JOB_STATE_SCRIPT = `
first_line_with() {
  local line
  while IFS= read -r line; do
    if [[ $line == *"$1"* ]]; then printf '%s' "$line"; return 0; fi
  done <<<"$2"
  return 1
}
scontrol_field() {
  local pattern=" $1=([^ ]*)"
  [[ " $2" =~ $pattern ]] && printf '%s' "\${BASH_REMATCH[1]}"
}
take_job_state() {
  : "\${job_state:=$1}" "\${job_reason:=$2}" "\${job_exit:=$3}" "\${job_nodes:=$4}" "\${job_restarts:=$5}"
}
is_final_record() {
  [ -n "$2" ] && [ "$2" != Unknown ] || return 1
  case $1 in
    ${SLURM_FINAL_STATES.join(' | ')}) return 0 ;;
  esac
  return 1
}
read_job_state() {
  local job=$1 out line answered=0 forgotten=0 unfinished='' state reason code nodes end
  job_state='' job_reason='' job_exit='' job_nodes='' job_restarts=''
  if out=$(squeue --noheader --states=all --jobs="$job" --Format='State:|,Reason:|,NodeList:|,RestartCnt:|' 2>&1); then
    answered=1
    if line=$(first_line_with '|' "$out"); then
      IFS='|' read -r job_state job_reason job_nodes job_restarts _ <<<"$line"
      case $job_state in
        COMPLETED) job_exit=0:0; return 0 ;;
        FAILED) answered=0 ;;
        *) return 0 ;;
      esac
    fi
  elif [[ $out == *'Invalid job id'* ]]; then
    answered=1 forgotten=1
  fi
  if out=$(sacct --noheader --parsable2 --allocations --jobs="$job" --format=State,Reason,ExitCode,NodeList,End 2>&1); then
    if line=$(first_line_with '|' "$out"); then
      IFS='|' read -r state reason code nodes end _ <<<"$line"
      [ "$nodes" = 'None assigned' ] && nodes=''
      state=\${state%% *}
      if is_final_record "$state" "$end" && [[ $code =~ ^[0-9]+:[0-9]+$ ]]; then
        answered=1
        take_job_state "$state" "$reason" "$code" "$nodes" ''
      elif [ -n "$state" ]; then
        unfinished="$state|$reason|$nodes"
      fi
    else
      answered=1
    fi
  fi
  if [ -z "$job_state" ] || [ -z "$job_exit" ] || [ "$job_state" = FAILED ]; then
    if out=$(scontrol show job -o "$job" 2>&1); then
      answered=1
      if line=$(first_line_with 'JobState=' "$out"); then
        state=$(scontrol_field JobState "$line")
        reason=$(scontrol_field Reason "$line")
        code=$(scontrol_field ExitCode "$line")
        nodes=$(scontrol_field NodeList "$line")
        # sacct drops a code past 127 by 128 (137 reads 9:0): slurmctld's is the one written.
        if [ "$job_state" = FAILED ] && [ "$state" = FAILED ] && [[ $code =~ ^[0-9]+:[0-9]+$ ]]; then
          job_exit=$code
        fi
        take_job_state "$state" "$reason" "$code" "$nodes" "$(scontrol_field Restarts "$line")"
      fi
    elif [[ $out == *'Invalid job id'* ]]; then
      answered=1 forgotten=1
    fi
  fi
  if [ -z "$job_state" ] && [ -n "$unfinished" ] && [ "$forgotten" = 0 ]; then
    IFS='|' read -r state reason nodes <<<"$unfinished"
    take_job_state "$state" "$reason" '' "$nodes" ''
    return 0
  fi
  if [ -n "$job_state" ]; then
    if [ "$job_state" = FAILED ] && [ -z "$job_exit" ]; then
      # squeue said FAILED, scontrol could not be asked and the accounting has no final
      # record yet: ask again for the exit code rather than guess it. Guess only once
      # slurmctld forgot the job since.
      [ "$forgotten" = 0 ] && return 2
      job_exit=1:0
    fi
    return 0
  fi
  [ "$answered" = 1 ] && return 1
  return 2
}
final_exit_code() {
  local status=\${2%%:*} signal=\${2##*:}
  case $1 in
    COMPLETED | FAILED)
      if [ "\${signal:-0}" != 0 ]; then echo $((128 + signal))
      elif [ "$1" = FAILED ] && [ "\${status:-0}" = 0 ]; then echo 1
      else echo "\${status:-0}"; fi ;;
    CANCELLED) if [ "$3" != 0 ]; then echo 130; else echo ${SLURM_END_STATES.CANCELLED.code}; fi ;;
${endCases}
  esac
}
`;
