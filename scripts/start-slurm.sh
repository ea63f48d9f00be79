#!/usr/bin/env bash
# A single-node Slurm for tests and CI (see NOTES: "A single-node Slurm that starts here in ~5 s").
# Idempotent: does nothing when this machine's node already answers. Needs root and Debian's
# slurm-wlm and munge (installed when missing). Two GPUs are a configured generic resource
# backed by /dev/null and /dev/zero, so `--gpus=1` schedules and sets CUDA_VISIBLE_DEVICES.
set -euo pipefail

node_name="$(hostname)"
state_dir="${FLUKSIO_SLURM_DIR:-/var/tmp/fluksio-slurm}"

node_ready() {
  timeout 5 sinfo --noheader --nodes="$node_name" --format=%t 2>/dev/null | grep -Eq '^(idle|mix|alloc)'
}

if command -v sinfo >/dev/null 2>&1 && node_ready; then
  exit 0
fi

if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
  apt-get update
  apt-get install -y --no-install-recommends slurm-wlm munge
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
    runuser -u munge -- /usr/sbin/munged
  else
    /usr/sbin/munged --force
  fi
  for _ in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
fi

mkdir -p "$state_dir"/{state,spool} /etc/slurm
cpus="$(nproc)"
cat >/etc/slurm/slurm.conf <<CONF
# Written by fluksio's scripts/start-slurm.sh: one node, for tests.
ClusterName=fluksio
SlurmctldHost=$node_name
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
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
NodeName=$node_name CPUs=$cpus RealMemory=4000 Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=$node_name Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$node_name MaxTime=INFINITE State=UP
CONF
cat >/etc/slurm/gres.conf <<CONF
NodeName=$node_name Name=gpu Count=2 File=/dev/null,/dev/zero
CONF

if ! pgrep -x slurmctld >/dev/null; then
  /usr/sbin/slurmctld -c
fi
if ! pgrep -x slurmd >/dev/null; then
  /usr/sbin/slurmd
fi

for _ in $(seq 60); do
  if node_ready; then
    exit 0
  fi
  scontrol update nodename="$node_name" state=resume >/dev/null 2>&1 || true
  sleep 0.5
done
echo "Slurm did not come up; logs: $state_dir/slurmctld.log $state_dir/slurmd.log" >&2
tail -n 20 "$state_dir/slurmctld.log" "$state_dir/slurmd.log" >&2 || true
exit 1
