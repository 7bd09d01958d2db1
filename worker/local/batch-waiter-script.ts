// The text of a batch waiter: a waiter that runs batch jobs one after another, each given to it
// over its stdin, so that a job costs a fork and the routine's exec rather than a shell's start
// as well (issue 14: 300 no-op jobs drained by a daemon, against a bare spawn loop; each exec
// costs about a millisecond of CPU here, and the shell's start was a third of a job's cost).
//
// Its stdin is a socket whose other end only the daemon holds (the spawn helper passes it on, as
// for standbys): the daemon's exit or kill -9 closes it, and a waiter waiting for a job reads end
// of file and leaves, having run nothing. One running a job finishes it first (sentinel,
// leftovers), exactly as run.sh does, then leaves at the end of file.
//
// The shell reads its commands from that socket (`sh -s FILE`): the daemon's first line sources
// FILE (this text: functions, no job), and each job is then one command, `job DIR WORKDIR VARS
// MANIFEST COMMAND [ARG...]`, its words quoted for sh. The shell's parser reads its input in
// blocks where the `read` builtin makes a system call per byte (dash and bash alike: a job's
// message is about a kilobyte, its manifest half of it); bash still reads a pipe or socket it
// takes commands from a byte at a time, so there nothing is lost either. VARS: the assignments
// for the routine's environment (`unset`/`export`, evaluated in the routine's process only);
// MANIFEST: the manifest of a new directory (one line of JSON, written before the claim: the
// daemon's thread is spared a file's creation; its args are masked, its env names only) or ''.
// They come through the socket, never through a file (secrets stay off disk). The waiter
// answers on the same socket, a line each: `started` once pid.json is written, `taken` when
// another waiter had claimed the directory, `refused` when it could not write the manifest (it
// did not claim), and `over` once the sentinel is written and what the routine left is stopped:
// only then does it read the next job. A sentinel it could not write ends it (the job reads as
// vanished once it is gone; a waiter alive beside a job without a sentinel would make it look
// running for ever).
import type { ProviderName } from '../jobdir/proc.js';
import { forkRoutine, leftoversFunction, shQuote, signalForwarding, startTimeFunction, waitForChild } from './wrapper.js';

/** Two spaces before each line that has text: a piece shared with run.sh, inside the job loop. */
const indent = (text: string): string =>
  text
    .split('\n')
    .map((l) => (l === '' ? l : `  ${l}`))
    .join('\n');

export interface BatchWaiterParams {
  provider: ProviderName;
  /** argv that makes the rest of the command line the leader of a new session. */
  setsid: string[];
  leftoverGraceMs?: number;
  /** Where the waiter stays between jobs (it enters each job's working directory). */
  home: string;
}

/** sh words for `argv`: single-quoted, a newline as "$nl" (the waiter defines nl), so that the assignments of a job stay one line of its command. */
export function shWords(argv: readonly string[]): string {
  return argv.map((a) => shQuote(a).replace(/\n/g, `'"$nl"'`)).join(' ');
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Names a shell keeps to itself (bash's read-only ones among them): set through exec, not by the waiter's shell. */
const SHELL_OWN = /^(BASH.*|SHELLOPTS|EUID|UID|PPID|OPTIND|LINENO|IFS|ENV)$/;
const assignable = (name: string) => NAME.test(name) && !SHELL_OWN.test(name);

/**
 * The assignments that turn the environment a waiter was started with (`base`) into `want`:
 * null when a name cannot be a shell variable, or is one the shell keeps to itself (that job
 * starts the ordinary way, through exec).
 */
export function envAssignments(base: Readonly<Record<string, string>>, want: Readonly<Record<string, string>>): string | null {
  const out: string[] = [];
  for (const k of Object.keys(base)) {
    if (!(k in want)) {
      if (!assignable(k)) return null;
      out.push(`unset ${k}`);
    }
  }
  for (const [k, v] of Object.entries(want)) {
    if (base[k] === v) continue;
    if (!assignable(k)) return null;
    out.push(`export ${shWords([`${k}=${v}`])}`);
  }
  return out.join('; ');
}

/** The first line a new waiter reads: its script (an absolute path: `.` searches PATH for a bare name), sourced. */
export function sourceScript(file: string): string {
  return `. ${shQuote(file)}\n`;
}

/**
 * A job for a batch waiter: one command for its shell; null when a place holds a newline (it
 * starts the ordinary way). `manifest`: one line of JSON for the waiter to write before its
 * claim, or '' (written already).
 */
export function batchJobMessage(runDir: string, cwd: string, argv: readonly string[], assignments: string, manifest: string): string | null {
  if (runDir.includes('\n') || cwd.includes('\n') || manifest.includes('\n')) return null;
  return `job ${[runDir, cwd, assignments, manifest, ...argv].map(shQuote).join(' ')}\n`;
}

export function batchWaiterScript(p: BatchWaiterParams): string {
  const setsid = p.setsid.map(shQuote).join(' ');
  return `#!/bin/sh
# Tend batch waiter (local backend). Generated by the daemon; do not edit.
#
#   sh -s batch-waiter.sh      stdin: a socket only the daemon holds; its first line sources this
#
# Defines \`job\`; the daemon then sends one \`job\` command per job. A job writes the manifest
# (if given), claims the run dir (launched, O_EXCL), starts the routine as the leader of a new
# session with stdin /dev/null and its streams appended to stdout.log and stderr.log, writes
# pid.json and says "started"; waits for it (TERM, INT, HUP passed on to its group), writes the
# sentinel, stops what it left and says "over"; the shell then reads the next. End of file: the
# daemon is gone, and so is this.
set -u
set -f
umask 077
# The daemon gone, an answer fails (EPIPE) rather than killing this waiter mid-job.
trap '' PIPE
nl='
'
home=${shQuote(p.home)}

${signalForwarding()}

${leftoversFunction(p.leftoverGraceMs)}

${startTimeFunction(p.provider)}

say() {
  { printf '%s\\n' "$1" >&0; } 2> /dev/null
}

# over RESULT: the sentinel (one write into a new file), leftovers stopped, then "over".
over() {
  trap '' TERM INT HUP
  set -C
  { printf '%s\\n' "$1" > "$dir/exit_code"; } 2> /dev/null
  set +C
  [ -n "$child" ] && leftovers
  [ -e "$dir/exit_code" ] || exit 0
  child=
  cd -- "$home" 2> /dev/null || cd /
  trap 'forward TERM' TERM
  trap 'forward INT' INT
  trap 'forward HUP' HUP
  say over
}

# job DIR WORKDIR VARS MANIFEST COMMAND [ARG...]
job() {
  child=
  dir=$1
  workdir=$2
  vars=$3
  manifest=$4
  shift 4
  set -C
  # A new directory's manifest, before the claim (a reader that sees launched finds it); no
  # manifest, no claim: the daemon launches the job the ordinary way.
  if [ -n "$manifest" ]; then
    { printf '%s\\n' "$manifest" > "$dir/manifest.json"; } 2> /dev/null
    if [ ! -s "$dir/manifest.json" ]; then
      set +C
      say refused
      return 0
    fi
  fi
  if ! { printf '%s %s\\n' "$$" "$ws" > "$dir/launched"; } 2> /dev/null; then
    set +C
    say taken
    return 0
  fi
  set +C
  if [ ! -d "$workdir" ]; then
    over "error:working directory does not exist: $workdir"
    return 0
  fi
  if ! cd -- "$workdir" 2> /dev/null; then
    over "error:cannot enter working directory: $workdir"
    return 0
  fi
${indent(forkRoutine(setsid, 'TERM INT HUP PIPE', 'eval "$vars"'))}
  say started

${indent(waitForChild())}
  over "$result"
}

starttime $$
ws=$st
`;
}
