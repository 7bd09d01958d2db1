// The text of `run.sh`, the per-job wrapper. It is the only process that waits on the routine,
// so it is the one that records how the routine ended. It runs detached from the daemon (its own
// session), so a daemon killed with -9 leaves the job running and the sentinel still written.
//
// Secrets stay off disk: the command, its arguments and the environment reach the wrapper through
// exec (argv + environ), never through this file. The file holds only the run dir, the working
// directory and the log cap.

/** Quote a string for POSIX sh: 'it'\''s'. */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface WrapperParams {
  runDir: string;
  /** Working directory for the routine. */
  cwd: string;
  /** Rotation size: each stream is kept as `X.log.1` + `X.log`, each at most this many bytes. */
  halfCapBytes: number;
}

/** The umask the routine runs with: the one Tend was started with (its own files are owner-only). */
function routineUmask(): string {
  return (process.umask() & 0o777).toString(8).padStart(4, '0');
}

export function wrapperScript(p: WrapperParams): string {
  return `#!/usr/bin/env bash
# Tend job wrapper (local backend). Generated at submit; do not edit.
#
#   run.sh COMMAND [ARG...]
#
# - claims the directory by creating \`launched\` ("PID STARTTIME") exclusively, and exits at once
#   without doing anything if another wrapper has claimed it already;
# - starts COMMAND as the leader of a new session (setsid), stdin from /dev/null, in workdir;
# - copies its stdout / stderr into stdout.log / stderr.log; when a log reaches $half bytes it is
#   renamed to *.log.1 (replacing the previous one) and a new log is started, so each stream keeps
#   at most 2 x half bytes on disk, always the newest;
# - writes {wrapperPid, wrapperStartTime, pid, startTime} to pid.json, start times being field 22
#   of /proc/<pid>/stat (one write of a complete line into a file that did not exist: readers see
#   no file, an empty one or the whole record, and take the first two as "not yet");
# - passes TERM / INT / HUP it receives on to the routine's process group and keeps waiting;
# - when the routine ends, writes its exit code, signal:NAME (status 129-192 is taken as death by
#   signal 1-64, as shells do) or error:MESSAGE to .exit_code.tmp, then renames it to exit_code.
#
# Every job pays for what this script forks, so it forks little: no command substitutions on the
# common path, log pipes from process substitution (no mkfifo, nothing to clean up), one reader
# per stream, one rename for the sentinel.
set -u
# Everything the wrapper writes in the job directory is owner-only; the routine gets the umask
# Tend was started with back (issue 16: keep both umask lines through the wrapper's rewrite).
umask 077
# Signals are passed on to the routine's process group once it runs; until then they are noted
# and ignored (the wrapper must live to write the sentinel).
child=
trapped=0
forward() {
  trapped=1
  [ -n "$child" ] || return 0
  kill -s "$1" -- "-$child" 2> /dev/null || kill -s "$1" "$child" 2> /dev/null
  return 0
}
trap 'forward TERM' TERM
trap 'forward INT' INT
trap 'forward HUP' HUP
# The wrapper's own tools are looked up with the standard directories appended; the routine gets
# the PATH it was given.
had_path=\${PATH+x}
given_path=\${PATH-}
PATH="\${PATH:+$PATH:}/usr/local/bin:/usr/bin:/bin"
dir=${shQuote(p.runDir)}
workdir=${shQuote(p.cwd)}
half=${Math.max(1, Math.floor(p.halfCapBytes))}

finish() {
  printf '%s\\n' "$1" > "$dir/.exit_code.tmp" && mv -f -- "$dir/.exit_code.tmp" "$dir/exit_code"
}

# starttime PID: sets st to field 22 of /proc/PID/stat (empty if gone), without a subshell.
starttime() {
  local s f
  st=
  read -r s < "/proc/$1/stat" 2> /dev/null || return 0
  s=\${s##*) }
  read -r -a f <<< "$s"
  st=\${f[19]:-}
}

# Claim the job directory (O_EXCL through noclobber): of two wrappers started for one run (a
# launcher killed between spawn and record, then a resubmission), exactly one runs the routine.
starttime $$
ws=$st
set -C
if ! { printf '%s %s\\n' "$$" "\${ws:-null}" > "$dir/launched"; } 2> /dev/null; then
  exit 0
fi
set +C

# Resolved now (hashed, no fork), while PATH has the standard directories.
setsid_bin=setsid
hash setsid 2> /dev/null && setsid_bin=\${BASH_CMDS[setsid]}
unbuffered=
hash stdbuf 2> /dev/null && unbuffered="\${BASH_CMDS[stdbuf]} -o0"


# cap LOG < stream: copy the stream to LOG, rotating LOG to LOG.1 each time it reaches $half bytes.
# head -c never reads past its count; stdbuf -o0 makes it write each read at once (GNU head
# buffers its output otherwise, and followers would see the log in 4 KiB steps). Whether there is
# (more) output is told by reading one byte with the read builtin first, so a stream that stays
# empty costs no process at all (bash drops a NUL byte read there: at most the NUL bytes right at
# the start of a file are lost).
cap() {
  trap '' TERM INT HUP
  local c size=0
  LC_ALL=C
  : > "$1"
  while IFS= read -r -d '' -N 1 c; do
    if [ "$size" -ge "$half" ]; then
      mv -f -- "$1" "$1.1"
      printf '%s' "$c" > "$1"
    else
      printf '%s' "$c" >> "$1"
    fi
    $unbuffered head -c "$((half - 1))" >> "$1"
    size=$half
  done
}

if [ ! -d "$workdir" ]; then
  finish "error:working directory does not exist: $workdir"
  exit 0
fi
if ! cd -- "$workdir"; then
  finish "error:cannot enter working directory: $workdir"
  exit 0
fi

exec {out}> >(cap "$dir/stdout.log")
cap_out=$!
exec {err}> >(cap "$dir/stderr.log")
cap_err=$!
(
  # This subshell becomes the routine (exec keeps the pid and the start time), so it records
  # itself: it is alive while it reads its own /proc entry, however soon the routine exits.
  trap - TERM INT HUP QUIT
  me=$BASHPID
  starttime "$me"
  printf '{"wrapperPid":%s,"wrapperStartTime":%s,"pid":%s,"startTime":%s}\\n' \\
    $$ "\${ws:-null}" "$me" "\${st:-null}" > "$dir/pid.json"
  if [ -n "$had_path" ]; then PATH=$given_path; else unset PATH; fi
  umask ${routineUmask()}
  exec {out}>&- {err}>&-
  exec "$setsid_bin" -- "$@"
) >&$out 2>&$err < /dev/null &
child=$!
# Only the routine (and what it starts) holds the pipes now: the readers end when it does.
exec {out}>&- {err}>&-
# The naps while draining (below) are reads with a timeout on a pipe nobody writes to: made now,
# while the routine starts, rather than on the way from its end to the sentinel.
exec {tick}<> <(:)

# A signal we pass on interrupts wait (status > 128): wait again for the routine's own end. But
# when the routine had already ended (its status collected by that wait), a second wait would
# only say "not a child" (127): its status stands.
while :; do
  trapped=0
  wait "$child"
  status=$?
  [ "$trapped" = 1 ] && [ "$status" -gt 128 ] && kill -0 "$child" 2> /dev/null || break
done

if [ "$status" -gt 128 ] && [ "$status" -le 192 ] && name=$(kill -l "$status" 2> /dev/null); then
  result="signal:$name"
else
  result=$status
fi

# Let the captured output drain before the sentinel, but never wait long for it (about 2 s): a
# grandchild left running may hold the pipes open for as long as it lives. The naps are a
# builtin (no process per nap).
for ((i = 0; i < 420; i++)); do
  kill -0 "$cap_out" 2> /dev/null || kill -0 "$cap_err" 2> /dev/null || break
  if [ "$i" -lt 20 ]; then nap=0.001; else nap=0.005; fi
  read -r -t "$nap" -u "$tick" _ 2> /dev/null
done

# The wrapper becomes the rename that publishes the sentinel: its exit is the job's end. Nothing
# is left to pass signals on to, and the rename must not die of one: they are ignored (which exec
# keeps).
trap '' TERM INT HUP
printf '%s\n' "$result" > "$dir/.exit_code.tmp" && exec mv -f -- "$dir/.exit_code.tmp" "$dir/exit_code"
finish "$result"
exit 0
`;
}
