// The text of `run.sh`, the per-job waiter. It is the only process that waits on the routine, so
// it is the one that records how the routine ended. It runs detached from the daemon (its own
// session), so a daemon killed with -9 leaves the job running and the sentinel still written.
//
// POSIX sh (dash, `bash --posix`, macOS's /bin/sh), and it costs one process beside the routine:
// the routine's streams go straight to their files (the cap is enforced by whoever polls them,
// logrotate.ts), start times are read with builtins, and the sentinel is one write.
//
// Secrets stay off disk: the command, its arguments and the environment reach the waiter through
// exec (argv + environ), never through this file. The file holds only the run dir, the working
// directory and the paths of two tools.
import { constants } from 'node:os';
import type { ProviderName } from '../jobdir/proc.js';
import { PS_ENV } from '../jobdir/proc-ps.js';

/** Quote a string for POSIX sh: 'it'\''s'. */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface WrapperParams {
  /**
   * The job directory and the routine's working directory, written into the script. Without them
   * the script is the same for every job: the directory is the one it is run from (`$0` is
   * `<runDir>/run.sh`) and the working directory comes in TEND_WAITER_WORKDIR (the job directory
   * when unset), which the routine does not inherit.
   */
  runDir?: string;
  /** Working directory for the routine. */
  cwd?: string;
  /** How process start times are read: /proc (builtins only) or `ps` (one process per read). */
  provider: ProviderName;
  /** argv that makes the rest of the command line the leader of a new session, e.g. [setsid]. */
  setsid: string[];
  /** How long what the routine left running in its process group gets after TERM, before KILL. */
  leftoverGraceMs?: number;
}

/** The umask the routine runs with: the one Tend was started with (its own files are owner-only). */
export function routineUmask(): string {
  return (process.umask() & 0o777).toString(8).padStart(4, '0');
}

/** Signals 1-64 as this OS numbers them, by number, each with its first name (without SIG). */
export function signalsByNumber(): [number, string][] {
  const byNumber = new Map<number, string>();
  for (const [name, num] of Object.entries(constants.signals)) {
    if (num >= 1 && num <= 64 && !byNumber.has(num)) byNumber.set(num, name.replace(/^SIG/, ''));
  }
  return [...byNumber.entries()].sort((a, b) => a[0] - b[0]);
}

/** `case` arms turning an exit status 129-192 into the signal's name, as shells report it. */
export function signalCases(): string {
  return signalsByNumber()
    .map(([num, name]) => `  ${128 + num}) result=signal:${name} ;;`)
    .join('\n');
}

/** starttime PID: sets st (JSON: a number, a string or null) without forking where the OS allows. */
export function startTimeFunction(provider: ProviderName): string {
  if (provider === 'proc') {
    // Field 22 of /proc/PID/stat is the 20th after "pid (comm) ", comm possibly holding spaces.
    return `starttime() {
  st=null
  s=
  { read -r s < "/proc/$1/stat"; } 2> /dev/null
  [ -n "$s" ] || return 0
  s=\${s##*") "}
  set -- $s
  [ $# -ge 20 ] && eval "st=\\\${20}"
  return 0
}`;
  }
  const env = Object.entries(PS_ENV).map(([k, v]) => `${k}=${v}`).join(' ');
  return `starttime() {
  st=$(${env} ps -o lstart= -p "$1" 2> /dev/null)
  case $st in
    *[0-9]*) st="\\"$st\\"" ;;
    *) st=null ;;
  esac
}`;
}

/** Until the routine runs, signals are noted and ignored; then passed on to its process group. */
export function signalForwarding(): string {
  return `# Signals are passed on to the routine's process group once it runs; until then they are noted
# and ignored (the waiter must live to write the sentinel).
child=
trapped=0
forward() {
  trapped=1
  [ -n "$child" ] || return 0
  kill -s "$1" -- -"$child" 2> /dev/null || kill -s "$1" "$child" 2> /dev/null
  return 0
}
trap 'forward TERM' TERM
trap 'forward INT' INT
trap 'forward HUP' HUP`;
}

/** finish RESULT: the sentinel (one write into a new file), then what the routine left running. */
export function finishFunctions(leftoverGraceMs = 5000): string {
  return `finish() {
  trap '' TERM INT HUP
  set -C
  { printf '%s\\n' "$1" > "$dir/exit_code"; } 2> /dev/null
  [ -n "$child" ] && leftovers
  exit 0
}
${leftoversFunction(leftoverGraceMs)}`;
}

/** leftovers: TERM to what is left in the routine's process group ($child), KILL after the grace. */
export function leftoversFunction(leftoverGraceMs = 5000): string {
  return `leftovers() {
  kill -s TERM -- -"$child" 2> /dev/null || return 0
  n=0
  while kill -s 0 -- -"$child" 2> /dev/null && [ "$n" -lt ${Math.max(1, Math.ceil(leftoverGraceMs / 100))} ]; do
    sleep 0.1
    n=$((n + 1))
  done
  kill -s KILL -- -"$child" 2> /dev/null
  return 0
}`;
}

/**
 * The one fork, shared by both waiters: the child becomes the routine (exec keeps the pid and the
 * start time), and pid.json, written once (noclobber), names it and the waiter ($ws: its start
 * time). `traps` are the waiter's own, undone for the routine; `setup` runs in the child first.
 */
export function forkRoutine(setsid: string, traps: string, setup = ''): string {
  return `# The one fork: this child becomes the routine (exec keeps the pid and the start time).
{
  trap - ${traps}
${setup ? `  ${setup}\n` : ''}  umask ${routineUmask()}
  exec ${setsid} "$@"
} < /dev/null >> "$dir/stdout.log" 2>> "$dir/stderr.log" &
child=$!
starttime "$child"
set -C
printf '{"wrapperPid":%s,"wrapperStartTime":%s,"pid":%s,"startTime":%s}\\n' "$$" "$ws" "$child" "$st" > "$dir/pid.json"
set +C`;
}

/** Wait for $child (through signals passed on), then set $result (exit code or signal:NAME). */
export function waitForChild(): string {
  return `# A signal we pass on interrupts wait (status > 128): wait again for the routine's own end. But
# when the routine had already ended (its status collected by that wait), a second wait would
# only say "not a child" (127): its status stands.
while :; do
  trapped=0
  wait "$child"
  status=$?
  [ "$trapped" = 1 ] && [ "$status" -gt 128 ] && kill -0 "$child" 2> /dev/null || break
done

result=$status
case $status in
${signalCases()}
esac`;
}

/** Where the job directory and the working directory come from (WrapperParams). */
function placeLines(p: WrapperParams): string {
  if (p.runDir !== undefined) return `dir=${shQuote(p.runDir)}\nworkdir=${shQuote(p.cwd ?? p.runDir)}`;
  return `dir=\${0%/*}\nworkdir=\${TEND_WAITER_WORKDIR:-$dir}\nunset TEND_WAITER_WORKDIR`;
}

export function wrapperScript(p: WrapperParams): string {
  const setsid = p.setsid.map(shQuote).join(' ');
  return `#!/bin/sh
# Tend job waiter (local backend). Generated at submit; do not edit.
#
#   /abs/path/to/JOBDIR/run.sh COMMAND [ARG...]
#
# - the job directory and the routine's working directory are written below, or (the copy every
#   local job shares, hard-linked as each job's run.sh) the directory this script is run from and
#   TEND_WAITER_WORKDIR (the job directory when unset), which the routine does not inherit;
# - claims the directory by creating \`launched\` ("PID STARTTIME") exclusively, and exits at once
#   without doing anything if another waiter has claimed it already;
# - starts COMMAND as the leader of a new session, stdin from /dev/null, in workdir, its stdout and
#   stderr appended straight to stdout.log and stderr.log (the cap is kept by whoever polls);
# - writes {wrapperPid, wrapperStartTime, pid, startTime} to pid.json (one write of a complete
#   line into a file that did not exist: readers see no file, an empty one or the whole record);
#   the routine cannot be reaped before this waiter waits, so its start time is read safely;
# - passes TERM / INT / HUP it receives on to the routine's process group and keeps waiting;
# - when the routine ends, writes its exit code, signal:NAME (status 129-192 is taken as death by
#   signal 1-64, as shells do) or error:MESSAGE to exit_code, a new file, in one write of one
#   line: readers take a file without its newline as not written yet;
# - then stops what the routine left running in its process group (TERM, KILL after the grace):
#   nothing Tend started runs on unsupervised once its job is over. A process that made a
#   session of its own left the job on purpose and is not reached.
set -u
set -f
# Everything the waiter writes in the job directory is owner-only; the routine gets the umask
# Tend was started with back (issue 16: keep both umask lines through the wrapper's rewrite).
umask 077
${signalForwarding()}
${placeLines(p)}

${finishFunctions(p.leftoverGraceMs)}

${startTimeFunction(p.provider)}

# Claim the job directory (O_EXCL through noclobber): of two waiters started for one run (a
# launcher killed between spawn and record, then a resubmission), exactly one runs the routine.
starttime $$
ws=$st
set -C
if ! { printf '%s %s\\n' "$$" "$ws" > "$dir/launched"; } 2> /dev/null; then
  exit 0
fi
set +C

if [ ! -d "$workdir" ]; then
  finish "error:working directory does not exist: $workdir"
fi
cd -- "$workdir" 2> /dev/null || finish "error:cannot enter working directory: $workdir"

${forkRoutine(setsid, 'TERM INT HUP')}

${waitForChild()}
finish "$result"
`;
}
