#!/usr/bin/env bash
# A single-node Slurm with accounting, for tests and CI (see NOTES: "A single-node Slurm that
# starts here in ~5 s"). Needs root; installs Debian's slurm-wlm, slurmdbd and munge (and
# mariadb-server) when missing. Two GPUs are a configured generic resource backed by /dev/null
# and /dev/zero, so `--gpus=1` schedules and sets CUDA_VISIBLE_DEVICES.
#
# Accounting: slurmdbd keeps the cluster's jobs in MariaDB (database fluksio_slurm_acct on
# the local server, user root without a password, as this machine's MariaDB is set up), so
# `sacct` answers as on a real cluster: ReqTRES/AllocTRES with gres/gpu, CPUTimeRAW, final
# states and exit codes, arriving a moment after slurmctld saw them.
#
# Idempotent: exits at once when the node answers, slurmctld runs with this script's
# configuration and slurmdbd answers for the cluster. Otherwise it starts what is missing
# (MariaDB, munge, slurmdbd, slurmctld, slurmd), and restarts a daemon whose configuration
# file it changed (a cluster started without accounting gets it). slurmctld keeps its state
# across restarts, so running jobs survive and job ids never repeat; a controller whose
# state is gone, or that ran without accounting (an older version of this script started it
# with -c), may number jobs from 1 again, so the accounting database is emptied first
# (sacct -j N would otherwise answer with an older job N's record).
set -euo pipefail

node_name="$(hostname)"
state_dir="${FLUKSIO_SLURM_DIR:-/var/tmp/fluksio-slurm}"
cluster=fluksio
accounting_db=fluksio_slurm_acct

slurm_conf() {
  cat <<CONF
# Written by fluksio's scripts/start-slurm.sh: one node, for tests.
ClusterName=$cluster
SlurmctldHost=$node_name
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=$node_name
AccountingStorageTRES=gres/gpu
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
MpiDefault=none
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
MinJobAge=300
KillWait=2
StateSaveLocation=$state_dir/state
SlurmdSpoolDir=$state_dir/spool
SlurmctldPidFile=$state_dir/slurmctld.pid
SlurmdPidFile=$state_dir/slurmd.pid
SlurmctldLogFile=$state_dir/slurmctld.log
SlurmdLogFile=$state_dir/slurmd.log
NodeName=$node_name CPUs=$(nproc) RealMemory=4000 Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=$node_name Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$node_name MaxTime=INFINITE State=UP
CONF
}

gres_conf() {
  echo "NodeName=$node_name Name=gpu Count=2 File=/dev/null,/dev/zero"
}

# StorageHost=localhost: the client library takes MariaDB's socket, where root has no password.
slurmdbd_conf() {
  cat <<CONF
# Written by fluksio's scripts/start-slurm.sh: the test cluster's accounting.
AuthType=auth/munge
DbdHost=$node_name
SlurmUser=root
PidFile=$state_dir/slurmdbd.pid
LogFile=$state_dir/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=$accounting_db
CONF
}

# Outputs are read whole before grep: `grep -q` in a pipe may leave its writer to SIGPIPE,
# which fails the pipe under pipefail.
node_ready() {
  local state
  state="$(timeout 5 sinfo --noheader --nodes="$node_name" --format=%t 2>/dev/null)" &&
    grep -Eq '^(idle|mix|alloc)' <<<"$state"
}

# slurmctld runs with this script's accounting settings, and slurmdbd answers for the cluster.
accounting_ready() {
  local config
  config="$(timeout 5 scontrol show config 2>/dev/null)" &&
    grep -Eq '^AccountingStorageType += accounting_storage/slurmdbd$' <<<"$config" &&
    [ "$(timeout 5 sacctmgr --noheader --parsable2 show cluster "$cluster" format=Cluster 2>/dev/null)" = "$cluster" ]
}

configured() {
  [ "$(cat /etc/slurm/slurm.conf 2>/dev/null)" = "$(slurm_conf)" ] &&
    [ "$(cat /etc/slurm/gres.conf 2>/dev/null)" = "$(gres_conf)" ] &&
    [ "$(cat /etc/slurm/slurmdbd.conf 2>/dev/null)" = "$(slurmdbd_conf)" ]
}

ready() {
  command -v sinfo >/dev/null 2>&1 && command -v slurmdbd >/dev/null 2>&1 &&
    configured && node_ready && accounting_ready
}

if ready; then
  exit 0
fi
# One at a time: test files start in parallel, each running this script. The one that waited
# may find the work done. The daemons started below close the lock's descriptor (9>&-), or
# they would hold the lock for as long as they run.
mkdir -p "$state_dir"
exec 9>"$state_dir/start.lock"
flock 9
if ready; then
  exit 0
fi

fail() {
  echo "$1; logs: $state_dir/slurmdbd.log $state_dir/slurmctld.log $state_dir/slurmd.log" >&2
  tail -n 20 "$state_dir/slurmdbd.log" "$state_dir/slurmctld.log" "$state_dir/slurmd.log" \
    /var/log/mysql/error.log >&2 2>/dev/null || true
  exit 1
}

missing=()
command -v slurmctld >/dev/null 2>&1 || missing+=(slurm-wlm)
command -v munged >/dev/null 2>&1 || missing+=(munge)
command -v slurmdbd >/dev/null 2>&1 || missing+=(slurmdbd)
command -v mariadbd >/dev/null 2>&1 || missing+=(mariadb-server)
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update
  apt-get install -y --no-install-recommends "${missing[@]}"
fi

if [ ! -s /etc/munge/munge.key ]; then
  mungekey --create --force 2>/dev/null || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown munge:munge /etc/munge/munge.key 2>/dev/null || true
chmod 400 /etc/munge/munge.key
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
if ! munge -n >/dev/null 2>&1; then
  if id munge >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged 9>&-
  else
    /usr/sbin/munged --force 9>&-
  fi
  for _ in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
fi

mariadb_ready() {
  mariadb --user=root --execute='SELECT 1' >/dev/null 2>&1
}
if ! mariadb_ready; then
  # As this machine starts it. Not `service mariadb start`: Debian's init script pings with
  # /etc/mysql/debian.cnf, which this machine lacks, so it waits 30 s and fails, the server up.
  mkdir -p /run/mysqld
  chown mysql:mysql /run/mysqld 2>/dev/null || true
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd 9>&-
  for _ in $(seq 100); do mariadb_ready && break; sleep 0.2; done
  mariadb_ready || fail "MariaDB, which slurmdbd keeps the accounting in, did not come up"
fi

# The live processes named $1: a daemon killed here lingers as a zombie until PID 1 reaps
# it, which is no daemon to talk to.
live() {
  pgrep -x --runstates R,S,D "$1"
}

# Stops the daemon whose pid file is $2 (or, without one, every live process named $1), and waits.
stop_daemon() {
  local pids
  pids="$(cat "$2" 2>/dev/null || true)"
  [ -n "$pids" ] && [ "$(cat "/proc/$pids/comm" 2>/dev/null)" = "$1" ] || pids="$(live "$1" || true)"
  [ -z "$pids" ] && return 0
  # shellcheck disable=SC2086
  kill $pids 2>/dev/null || true
  for _ in $(seq 100); do live "$1" >/dev/null || return 0; sleep 0.1; done
  # shellcheck disable=SC2086
  kill -9 $pids 2>/dev/null || true
}

# Writes $1 (mode $2) with what stdin holds; true when that changed the file.
write_if_changed() {
  local text
  text="$(cat)"
  if [ "$(cat "$1" 2>/dev/null)" = "$text" ]; then
    chmod "$2" "$1"
    return 1
  fi
  (
    umask 077
    printf '%s\n' "$text" >"$1.new"
  )
  chmod "$2" "$1.new"
  mv -f "$1.new" "$1"
}

mkdir -p "$state_dir"/{state,spool} /etc/slurm

# Whether the controller's jobs so far were accounted: the running slurmctld's setting, else
# the configuration it would start with, over a saved state.
accounted_so_far=0
running_config="$(timeout 5 scontrol show config 2>/dev/null || true)"
if live slurmctld >/dev/null && [ -n "$running_config" ]; then
  if grep -Eq '^AccountingStorageType += accounting_storage/slurmdbd$' <<<"$running_config"; then
    accounted_so_far=1
  fi
elif [ -e "$state_dir/state/job_state" ] &&
  grep -qx 'AccountingStorageType=accounting_storage/slurmdbd' /etc/slurm/slurm.conf 2>/dev/null; then
  accounted_so_far=1
fi

slurm_changed=0 dbd_changed=0
slurm_conf | write_if_changed /etc/slurm/slurm.conf 644 && slurm_changed=1
gres_conf | write_if_changed /etc/slurm/gres.conf 644 && slurm_changed=1
# slurmdbd refuses a configuration file others can read: it holds the database's credentials.
slurmdbd_conf | write_if_changed /etc/slurm/slurmdbd.conf 600 && dbd_changed=1
chown root:root /etc/slurm/slurmdbd.conf

# The accounting database holds this controller's jobs only. A controller that starts
# afresh (no saved state), or that ran without accounting (as an older version of this
# script started it: with -c, which forgets its job ids), may number jobs from 1 again,
# and `sacct -j N` would answer with an older job N's final record: empty it first. Its
# own jobs were never accounted, so nothing is lost.
if [ "$accounted_so_far" = 0 ]; then
  stop_daemon slurmdbd "$state_dir/slurmdbd.pid"
  mariadb --user=root --execute="DROP DATABASE IF EXISTS \`$accounting_db\`"
fi
mariadb --user=root --execute="CREATE DATABASE IF NOT EXISTS \`$accounting_db\`"

if [ "$dbd_changed" = 1 ]; then stop_daemon slurmdbd "$state_dir/slurmdbd.pid"; fi
live slurmdbd >/dev/null || /usr/sbin/slurmdbd 9>&-
for _ in $(seq 150); do
  timeout 5 sacctmgr --noheader show cluster >/dev/null 2>&1 && break
  sleep 0.2
done
timeout 5 sacctmgr --noheader show cluster >/dev/null 2>&1 || fail "slurmdbd did not come up"
if [ "$(timeout 5 sacctmgr --noheader --parsable2 show cluster "$cluster" format=Cluster)" != "$cluster" ]; then
  timeout 10 sacctmgr --immediate add cluster "$cluster" >/dev/null
fi

# A restart, not `scontrol reconfigure`: the accounting plugins are read at start-up only.
# (A controller running without accounting under this configuration: a run of this script
# that stopped before the restart.)
if [ "$slurm_changed" = 1 ] || [ "$accounted_so_far" = 0 ]; then
  stop_daemon slurmctld "$state_dir/slurmctld.pid"
  stop_daemon slurmd "$state_dir/slurmd.pid"
fi
# Without -c: slurmctld recovers its jobs and its next job id from the state directory. In
# the loop, as one still shutting down when first looked at may be gone the next moment.
for _ in $(seq 60); do
  live slurmctld >/dev/null || /usr/sbin/slurmctld 9>&-
  live slurmd >/dev/null || /usr/sbin/slurmd 9>&-
  if node_ready && accounting_ready; then
    exit 0
  fi
  scontrol update nodename="$node_name" state=resume >/dev/null 2>&1 || true
  sleep 0.5
done
fail "Slurm did not come up with accounting"
