#!/usr/bin/env bash
# Install (from Debian's packages) and start a single-node Slurm cluster on this machine, for the
# Slurm backend's tests and benchmark. Needs root. Idempotent: with everything up already it checks
# and exits in well under a second; otherwise it starts what is missing, in this order:
#
#   munged -> mysqld_safe (MariaDB) -> slurm_acct_db + its user -> slurmdbd -> cluster `tend` in
#   accounting -> slurmctld -> slurmd -> wait until `sinfo` shows the node idle (or busy).
#
# Usage: scripts/slurm/up.sh          start (install first if needed)
#        scripts/slurm/up.sh status   print the scheduler settings in effect, exit 0 if up
#
# Scheduler settings (slurm.conf, written below), chosen so jobs start in well under a second:
#   SchedulerType=sched/builtin      FIFO, no backfill cycle to wait for
#   SchedulerParameters=sched_interval=1,batch_sched_delay=0,sched_min_interval=0,default_queue_depth=1000
#                                    the scheduling loop runs every second (default 60 s), batch
#                                    jobs are not deferred (Slurm's default batch_sched_delay=3 s),
#                                    the event-triggered scheduler is not throttled. sched_interval
#                                    comes first: sched/builtin reads the first "interval=" it finds.
#                                    Measured: a job waits 0.5-1 s from sbatch to start (Slurm 22.05
#                                    starts batch jobs from its 1-second background cycle).
#   PartitionName=debug ... OverSubscribe=FORCE:8
#                                    up to 8 jobs share a core: 16 job slots on a 2-core machine,
#                                    about 16 no-op jobs started per second
#   KillWait=5                       TERM -> KILL on cancel and time limit (default 30 s)
#   MinJobAge=300                    finished jobs stay visible to squeue/scontrol for 5 minutes
#   SelectType=select/cons_tres with CR_Core_Memory, DefMemPerCPU=512: a job takes one core (shared,
#                                    above) and 512 MiB unless it asks for more (--cpus-per-task, --mem)
#   ProctrackType=proctrack/linuxproc, TaskPlugin=task/none: no cgroups or systemd needed
#   JobAcctGatherType=jobacct_gather/none: no per-job sampling
#   AccountingStorageType=accounting_storage/slurmdbd: sacct works (slurmdbd + MariaDB)
#
# The controller's state (job ids) lives in /var/spool/slurmctld and accounting in MariaDB. This
# script never wipes either: wiping one without the other makes job ids restart at 1 while old
# accounting rows remain, and a poll could then read a stale COMPLETED.
set -euo pipefail

# The daemons started below inherit this script's open files: close everything but stdio first,
# so that none of them keeps a caller's pipe or lock open for as long as it runs.
for fd in /proc/$$/fd/*; do
  fd=${fd##*/}
  if [ "$fd" -gt 2 ] 2> /dev/null; then eval "exec $fd>&-" 2> /dev/null || true; fi
done

CLUSTER=tend
PARTITION=debug
CONF_DIR=/etc/slurm
STATE_DIR=/var/spool/slurmctld
SPOOL_DIR=/var/spool/slurmd
LOG_DIR=/var/log/slurm
RUN_DIR=/run/slurm
DB=slurm_acct_db
WAIT_S=${TEND_SLURM_WAIT_S:-60}
SCHED_PARAMS=sched_interval=1,batch_sched_delay=0,sched_min_interval=0,default_queue_depth=1000

say() { printf 'slurm-up: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

# Wait for a command to succeed, up to $1 seconds.
wait_for() {
  local limit=$1 what=$2
  shift 2
  local deadline=$((SECONDS + limit))
  until "$@" > /dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || die "timed out after ${limit}s waiting for $what"
    sleep 0.2
  done
}

node_name() { hostname -s; }

munge_ok() { command -v munge > /dev/null && munge -n 2> /dev/null | unmunge > /dev/null 2>&1; }
mysql_ok() { mysqladmin --protocol=socket ping > /dev/null 2>&1; }
dbd_ok() { sacctmgr -n -P show cluster format=cluster > /dev/null 2>&1; }
ctld_ok() { scontrol ping 2> /dev/null | grep -q 'is UP'; }
node_ready() { sinfo -h -n "$(node_name)" -o '%T' 2> /dev/null | grep -Eq '^(idle|mixed|allocated|completing)$'; }
cluster_known() { sacctmgr -n -P show cluster format=cluster 2> /dev/null | grep -qx "$CLUSTER"; }
running() { pgrep -x "$1" > /dev/null 2>&1; }

status() {
  ctld_ok || { say "slurmctld is not answering"; return 1; }
  scontrol show config | grep -E '^(ClusterName|SchedulerType|SchedulerParameters|SelectType|SelectTypeParameters|KillWait|MinJobAge|AccountingStorageType|ProctrackType|TaskPlugin|SLURM_VERSION) '
  sinfo -h -o 'partition=%P nodes=%D state=%T cpus=%c memory=%m'
}

if [ "${1:-}" = status ]; then
  status
  exit $?
fi
if [ -n "${1:-}" ]; then
  die "unknown argument: $1 (use no argument, or status)"
fi

# --- configuration (rendered first: the fast path also checks that it is current) -----------------
dbd_conf=$CONF_DIR/slurmdbd.conf
ctl_conf=$CONF_DIR/slurm.conf
pass=
if [ -r "$dbd_conf" ]; then pass=$(sed -n 's/^StoragePass=//p' "$dbd_conf"); fi
if [ -z "$pass" ]; then pass=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9'); fi

render_dbd_conf() {
  cat <<EOF
# Written by scripts/slurm/up.sh
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
SlurmUser=slurm
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=$pass
StorageLoc=$DB
PidFile=$RUN_DIR/slurmdbd.pid
LogFile=$LOG_DIR/slurmdbd.log
EOF
}

node=$(node_name)
# The node's real hardware (CPUs, sockets, cores, threads, memory) as slurmd detects it.
hw_line() { slurmd -C | head -1 | sed -e 's/^NodeName=[^ ]* //'; }
hw=
if command -v slurmd > /dev/null; then hw=$(hw_line); fi
render_slurm_conf() {
  cat <<EOF
# Written by scripts/slurm/up.sh: a single-node cluster on localhost for Tend's tests and bench.
ClusterName=$CLUSTER
SlurmctldHost=$node(127.0.0.1)
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$STATE_DIR
SlurmdSpoolDir=$SPOOL_DIR
SlurmctldPidFile=$RUN_DIR/slurmctld.pid
SlurmdPidFile=$RUN_DIR/slurmd.pid
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SchedulerType=sched/builtin
SchedulerParameters=$SCHED_PARAMS
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=512
KillWait=5
MinJobAge=300
InactiveLimit=0
Waittime=0
MessageTimeout=10
SlurmctldTimeout=30
SlurmdTimeout=60
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
NodeName=$node NodeAddr=127.0.0.1 $hw State=UNKNOWN
PartitionName=$PARTITION Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
EOF
}

conf_current() {
  [ -n "$hw" ] && [ -r "$ctl_conf" ] && [ -r "$dbd_conf" ] \
    && cmp -s <(render_slurm_conf) "$ctl_conf" && cmp -s <(render_dbd_conf) "$dbd_conf"
}

# Fast path: everything up, configuration unchanged.
if conf_current && munge_ok && mysql_ok && dbd_ok && ctld_ok && node_ready; then
  say "already up (cluster $CLUSTER, node $node $(sinfo -h -n "$node" -o %T))"
  exit 0
fi

[ "$(id -u)" = 0 ] || die "must run as root to install and start Slurm"

# --- packages ------------------------------------------------------------------------------------
need=()
for pkg in slurm-wlm slurmdbd mariadb-server munge; do dpkg -s "$pkg" > /dev/null 2>&1 || need+=("$pkg"); done
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" > /dev/null
fi
id slurm > /dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin slurm

install -d -o slurm -g slurm -m 755 "$STATE_DIR" "$LOG_DIR" "$RUN_DIR"
install -d -o root -g root -m 755 "$SPOOL_DIR" "$CONF_DIR"

# --- munge ---------------------------------------------------------------------------------------
if ! munge_ok; then
  install -d -o munge -g munge -m 700 /etc/munge /var/lib/munge /var/log/munge
  install -d -o munge -g munge -m 755 /run/munge
  if [ ! -s /etc/munge/munge.key ]; then
    mungekey -c -k /etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key
    chmod 600 /etc/munge/munge.key
  fi
  if ! running munged; then
    say "starting munged"
    runuser -u munge -- /usr/sbin/munged
  fi
  wait_for 20 munged munge_ok
fi

# --- MariaDB and the accounting database ---------------------------------------------------------
if ! mysql_ok; then
  install -d -o mysql -g mysql -m 755 /run/mysqld
  if ! running mariadbd && ! running mysqld; then
    say "starting mysqld_safe"
    setsid -f mysqld_safe --user=mysql > /dev/null 2>&1 < /dev/null
  fi
  wait_for "$WAIT_S" MariaDB mysql_ok
fi

mysql --protocol=socket -u root <<SQL
CREATE DATABASE IF NOT EXISTS $DB;
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$pass';
ALTER USER 'slurm'@'localhost' IDENTIFIED BY '$pass';
GRANT ALL ON $DB.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
SQL

# --- configuration -------------------------------------------------------------------------------
# Write a file only when its content changes; report whether it did.
write_conf() {
  local path=$1 mode=$2 owner=$3 tmp
  tmp=$(mktemp "$path.XXXXXX")
  cat > "$tmp"
  chmod "$mode" "$tmp"
  chown "$owner" "$tmp"
  if [ -f "$path" ] && cmp -s "$tmp" "$path"; then
    rm -f "$tmp"
    return 1
  fi
  mv -f "$tmp" "$path"
  return 0
}

dbd_changed=0
render_dbd_conf | write_conf "$dbd_conf" 600 slurm:slurm && dbd_changed=1 || true
[ -n "$hw" ] || hw=$(hw_line)
ctl_changed=0
render_slurm_conf | write_conf "$ctl_conf" 644 root:root && ctl_changed=1 || true
[ -f "$CONF_DIR/cgroup.conf" ] || printf 'CgroupPlugin=autodetect\n' > "$CONF_DIR/cgroup.conf"

stop_daemon() {
  local name=$1
  running "$name" || return 0
  say "restarting $name (configuration changed)"
  pkill -x "$name" || true
  local deadline=$((SECONDS + 20))
  while running "$name" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
}
if [ "$dbd_changed" = 1 ]; then stop_daemon slurmdbd; fi
if [ "$ctl_changed" = 1 ]; then
  stop_daemon slurmctld
  stop_daemon slurmd
fi

# --- slurmdbd and the cluster record -------------------------------------------------------------
if ! dbd_ok; then
  if ! running slurmdbd; then
    say "starting slurmdbd"
    slurmdbd
  fi
  wait_for "$WAIT_S" slurmdbd dbd_ok
fi
if ! cluster_known; then
  say "adding cluster $CLUSTER to accounting"
  sacctmgr -i add cluster "$CLUSTER" > /dev/null
fi

# --- slurmctld and slurmd ------------------------------------------------------------------------
if ! ctld_ok; then
  if ! running slurmctld; then
    say "starting slurmctld"
    slurmctld
  fi
  wait_for "$WAIT_S" slurmctld ctld_ok
fi
if ! running slurmd; then
  say "starting slurmd"
  slurmd
fi

deadline=$((SECONDS + WAIT_S))
until node_ready; do
  state=$(sinfo -h -n "$node" -o '%T' 2> /dev/null || true)
  case "$state" in
    down* | drain* | fail*)
      # A node that was down (e.g. slurmd restarted) is returned to service.
      scontrol update NodeName="$node" State=RESUME > /dev/null 2>&1 || true
      ;;
  esac
  [ "$SECONDS" -lt "$deadline" ] || die "node $node not ready after ${WAIT_S}s (state: ${state:-unknown}); see $LOG_DIR"
  sleep 0.2
done
say "up: cluster $CLUSTER, partition $PARTITION, node $node $(sinfo -h -n "$node" -o '%T cpus=%c memory=%m')"
