#!/usr/bin/env bash
# A one-node SLURM cluster (munged, slurmctld, slurmd) living entirely in one folder: its own
# munge key and socket, ports, state, spool, pid and log files, so it touches nothing of the
# machine's own SLURM or munge and a test can start and stop it at will. Needs root (slurmd runs
# jobs as their submitter) and Debian's slurm-wlm and munge (scripts/install-deps).
#
#   one_node_slurm.sh start DIR   # prints nothing on success; clients then need SLURM_CONF=DIR/slurm.conf
#   one_node_slurm.sh stop DIR    # stops whatever `start` started there, waits for it to exit
#
# `start` exits 1 with the reason on stderr (and the daemons' logs) when the cluster cannot come
# up; it stops what it had started first.
set -euo pipefail

usage() { echo "usage: one_node_slurm.sh start|stop DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
action=$1
dir=$(cd "$2" && pwd)

# Stops one daemon by its pid file: TERM, then KILL after 10 s. Only pids this script recorded.
stop_daemon() {
    local pid_file=$1 pid
    [[ -s "$pid_file" ]] || return 0
    pid=$(cat "$pid_file")
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}

stop_all() {
    # slurmd first: it may still be running job steps, which it ends on TERM.
    stop_daemon "$dir/slurmd.pid"
    stop_daemon "$dir/slurmctld.pid"
    stop_daemon "$dir/munged.pid"
}

fail() {
    echo "one_node_slurm: $1" >&2
    for log in munged.log slurmctld.log slurmd.log; do
        [[ -s "$dir/$log" ]] && { echo "--- $log" >&2; tail -n 20 "$dir/$log" >&2; }
    done
    stop_all
    exit 1
}

if [[ $action == stop ]]; then
    stop_all
    exit 0
fi
[[ $action == start ]] || usage

[[ $(id -u) -eq 0 ]] || fail "needs root (slurmd starts jobs as the user who submitted them)"
for tool in munged mungekey slurmctld slurmd sbatch sinfo; do
    command -v "$tool" >/dev/null 2>&1 ||
        fail "$tool is not installed (scripts/install-deps installs slurm-wlm and munge)"
done

# Two free TCP ports, one per daemon, as the kernel hands them out.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')

node=$(hostname -s)
# The node's CPUs and memory as slurmd itself measures them: slurmd refuses a node described
# larger than it is.
hardware=$(slurmd -C | head -n 1 | sed 's/^NodeName=[^ ]* //')
mkdir -p "$dir/state" "$dir/spool"
cat >"$dir/slurm.conf" <<EOF
ClusterName=qmertest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=600
NodeName=$node NodeAddr=127.0.0.1 $hardware State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$dir/slurm.conf

mungekey --create --keyfile="$dir/munge.key" >/dev/null 2>&1 || fail "mungekey could not create a key"
munged --force --socket="$dir/munge.socket" --key-file="$dir/munge.key" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" \
    >/dev/null 2>&1 || fail "munged did not start"
slurmctld -f "$dir/slurm.conf" -i >/dev/null 2>&1 || fail "slurmctld did not start"
slurmd -f "$dir/slurm.conf" >/dev/null 2>&1 || fail "slurmd did not start"

# Up when the node registers and is idle: then jobs are placed at once.
for _ in $(seq 200); do
    state=$(sinfo -h -N -o %t 2>/dev/null || true)
    [[ $state == idle ]] && exit 0
    sleep 0.1
done
fail "the node is not idle after 20 s (sinfo says '${state:-nothing}')"
