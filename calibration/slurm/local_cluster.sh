#!/bin/bash
# A real Slurm cluster of N nodes on one Linux machine, to run calibrate.sbatch under Slurm
# and Open MPI as they behave on a cluster (sbatch's spool copy, srun steps, mpirun taking its
# hosts from the allocation, PMIx, MPI between nodes over TCP) without one.
#   calibration/slurm/local_cluster.sh start [N]   (default 2 nodes)
#   calibration/slurm/local_cluster.sh env         (the variables the clients need; eval it)
#   calibration/slurm/local_cluster.sh stop
# Each node is a network namespace with its own address on a bridge, its own host name (a UTS
# namespace), its own /tmp (a mount namespace) and its own slurmd; slurmctld and a munged of
# the cluster's own run on this machine. Everything else is shared, as a cluster's shared file
# system: the checkout, its build and the output folders, which must therefore not lie under
# /tmp (each node sees its own there). The cluster has its own
# configuration (SLURM_CONF), ports and munge socket, so it leaves an installed Slurm alone.
# Its nodes share this machine's cores: timings measured on it say nothing about a cluster;
# what it tests is that the steps run where they should and the traces and profiles come out.
# Needs root (namespaces, a bridge, daemons as root) and Debian's slurmctld, slurmd,
# slurm-client and munge packages (apt-get install slurmctld slurmd slurm-client munge).
# Environment (two clusters at once need different values of all four):
#   SIMCORE_SLURM_DIR   state folder: configuration, logs, spool, each node's /tmp
#                       (default /var/tmp/simcore-slurm)
#   SIMCORE_SLURM_NAME  prefix of the namespaces and network devices (default simslurm)
#   SIMCORE_SLURM_NET   first three bytes of the nodes' /24 network (default 10.213.77)
#   SIMCORE_SLURM_PORT  slurmctld's port; slurmd takes the next one (default 16817)
set -eEuo pipefail
dir=${SIMCORE_SLURM_DIR:-/var/tmp/simcore-slurm}
name=${SIMCORE_SLURM_NAME:-simslurm}
net=${SIMCORE_SLURM_NET:-10.213.77}
port=${SIMCORE_SLURM_PORT:-16817}
bridge=${name}0
[[ "$name" =~ ^[a-z][a-z0-9]{0,9}$ ]] || { echo "local_cluster.sh: SIMCORE_SLURM_NAME=$name; expected 1 to 10 lower-case letters and digits" >&2; exit 2; }
[[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1024 ] && [ "$port" -le 65534 ] || { echo "local_cluster.sh: SIMCORE_SLURM_PORT=$port; expected 1024 to 65534" >&2; exit 2; }
fail() { echo "local_cluster.sh: $*" >&2; exit 2; }

# The prerequisites; exit 77 (a test harness reads it as "skip") with what is missing.
check() {
  [ "$(id -u)" -eq 0 ] || { echo "local_cluster.sh: needs root (namespaces, a bridge, daemons)" >&2; exit 77; }
  local p missing=()
  for p in slurmctld slurmd munged sbatch srun scontrol ip unshare; do
    command -v "$p" > /dev/null || [ -x "/usr/sbin/$p" ] || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "local_cluster.sh: not installed: ${missing[*]} (apt-get install slurmctld slurmd slurm-client munge iproute2)" >&2
    exit 77
  fi
  if ! ip netns add "$name-probe" 2> /dev/null; then
    echo "local_cluster.sh: cannot create network namespaces here (no CAP_NET_ADMIN?)" >&2
    exit 77
  fi
  ip netns del "$name-probe"
}

env_lines() {
  echo "export SLURM_CONF=$dir/etc/slurm.conf"
}

stop() {
  local f t pids=()
  for f in "$dir"/run/*.pid; do
    # Only the cluster's daemons: a pid file left from before a reboot may name another process.
    [ -f "$f" ] && grep -qxE 'munged|slurmctld|slurmd' "/proc/$(cat "$f")/comm" 2> /dev/null && pids+=("$(cat "$f")")
    rm -f "$f"
  done
  if [ "${#pids[@]}" -gt 0 ]; then
    kill "${pids[@]}" 2> /dev/null || true
    # Gone before the next start binds the same ports (10 s, then by force).
    for ((t = 0; t < 100; t++)); do
      local p alive=0
      for p in "${pids[@]}"; do # a zombie (exited, not yet reaped) counts as gone
        [ -e "/proc/$p" ] && ! grep -q '^State:.*Z' "/proc/$p/status" 2> /dev/null && alive=1
      done
      [ "$alive" -eq 0 ] && break
      sleep 0.1
    done
    kill -9 "${pids[@]}" 2> /dev/null || true
  fi
  local ns
  for ns in $(ip netns list 2> /dev/null | awk -v p="^$name-node" '$1 ~ p {print $1}'); do
    ip netns pids "$ns" 2> /dev/null | xargs -r kill -9 2> /dev/null || true
    ip netns del "$ns" 2> /dev/null || true
  done
  ip link del "$bridge" 2> /dev/null || true
}

start() {
  local n=${1:-2}
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 64 ] || fail "node count '$n'; expected 1 to 64"
  check
  stop
  # A step that fails takes down what the ones before it started.
  trap 'echo "local_cluster.sh: start failed; stopping what had started" >&2; stop' ERR
  rm -rf "$dir"
  mkdir -p "$dir"/{etc,run,log,state,spool,munge}
  local cpus memory
  cpus=$(nproc)
  memory=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 / n))
  # munge: the cluster's own key, socket and daemon (as root, hence --force).
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 600 "$dir/munge/munge.key"
  munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed"
  # The network: a bridge on this machine (the controller's address), one namespace a node.
  ip link add "$bridge" type bridge
  ip addr add "$net.1/24" dev "$bridge"
  ip link set "$bridge" up
  local i nodes=""
  for ((i = 1; i <= n; i++)); do
    ip netns add "$name-node$i"
    ip link add "$name$i" type veth peer name eth0 netns "$name-node$i"
    ip link set "$name$i" master "$bridge"
    ip link set "$name$i" up
    ip -n "$name-node$i" addr add "$net.$((10 + i))/24" dev eth0
    ip -n "$name-node$i" link set eth0 up
    ip -n "$name-node$i" link set lo up
    nodes+="NodeName=node$i NodeAddr=$net.$((10 + i)) CPUs=$cpus RealMemory=$memory State=UNKNOWN"$'\n'
  done
  cat > "$dir/etc/slurm.conf" << EOF
# Written by calibration/slurm/local_cluster.sh: $n node(s) in network namespaces.
ClusterName=simcore-local
SlurmctldHost=$(hostname -s)($net.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
$nodes
PartitionName=local Nodes=node[1-$n] Default=YES MaxTime=INFINITE State=UP
EOF
  # Slurm 22.05 starts a cgroup plugin even with task/none; the v1 hierarchy where there is one.
  if [ -d /sys/fs/cgroup/cpuset ] || [ -d /sys/fs/cgroup/memory ]; then
    printf 'CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\nCgroupAutomount=no\n' > "$dir/etc/cgroup.conf"
  else
    printf 'CgroupPlugin=autodetect\n' > "$dir/etc/cgroup.conf"
  fi
  slurmctld -f "$dir/etc/slurm.conf" -i
  for ((i = 1; i <= n; i++)); do
    mkdir -p "$dir/spool/node$i" "$dir/nodes/node$i/tmp"
    chmod 1777 "$dir/nodes/node$i/tmp"
    ip netns exec "$name-node$i" unshare --uts --mount --propagation private bash -c \
      "hostname node$i && mount --bind '$dir/nodes/node$i/tmp' /tmp && exec slurmd -f '$dir/etc/slurm.conf'"
  done
  # Up when every node is idle.
  local t
  for ((t = 0; t < 60; t++)); do
    if [ "$(SLURM_CONF=$dir/etc/slurm.conf sinfo -h -o '%t %D' 2> /dev/null | awk '$1 == "idle" {s += $2} END {print s + 0}')" -eq "$n" ]; then
      echo "local_cluster.sh: $n node(s) up; eval \"\$($0 env)\" to use them (SLURM_CONF=$dir/etc/slurm.conf)"
      return 0
    fi
    sleep 1
  done
  echo "local_cluster.sh: the nodes did not come up in 60 s; logs in $dir/log" >&2
  tail -n 5 "$dir"/log/*.log >&2 || true
  stop
  exit 1
}

case ${1:-} in
  start) start "${2:-2}" ;;
  stop) stop ;;
  env) env_lines ;;
  check) check ;;
  *) fail "usage: $0 start [N] | env | stop | check" ;;
esac
