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
# - writes {wrapperPid, wrapperStartTime, pid, startTime} to pid.json (tmp + rename), start times
#   being field 22 of /proc/<pid>/stat;
# - passes TERM / INT / HUP it receives on to the routine's process group and keeps waiting;
# - when the routine ends, writes its exit code, signal:NAME (status 129-192 is taken as death by
#   signal 1-64, as shells do) or error:MESSAGE to .exit_code.tmp, then renames it to exit_code.
set -u
# The wrapper's own tools are looked up with the standard directories appended; the routine gets
# the PATH it was given.
had_path=\${PATH+x}
given_path=\${PATH-}
PATH="\${PATH:+$PATH:}/usr/local/bin:/usr/bin:/bin"
setsid_bin=$(command -v setsid) || setsid_bin=setsid
dir=${shQuote(p.runDir)}
workdir=${shQuote(p.cwd)}
half=${Math.max(1, Math.floor(p.halfCapBytes))}

finish() {
  printf '%s\\n' "$1" > "$dir/.exit_code.tmp" && mv -f -- "$dir/.exit_code.tmp" "$dir/exit_code"
}

starttime() {
  local s f
  read -r s < "/proc/$1/stat" 2>/dev/null || return 0
  s=\${s##*) }
  read -r -a f <<< "$s"
  printf '%s' "\${f[19]:-}"
}

# Claim the job directory (O_EXCL through noclobber): of two wrappers started for one run (a
# launcher killed between spawn and record, then a resubmission), exactly one runs the routine.
set -C
ws=$(starttime $$)
if ! { printf '%s %s\\n' "$$" "\${ws:-null}" > "$dir/launched"; } 2> /dev/null; then
  exit 0
fi
set +C

child=
trapped=0
forward() {
  trapped=1
  [ -n "$child" ] || return 0
  kill -s "$1" -- "-$child" 2>/dev/null || kill -s "$1" "$child" 2>/dev/null
  return 0
}
trap 'forward TERM' TERM
trap 'forward INT' INT
trap 'forward HUP' HUP

# cap LOG < stream: copy the stream to LOG, rotating LOG to LOG.1 each time it reaches $half bytes.
# head -c never reads past its count; stdbuf -o0 makes it write each read at once (GNU head
# buffers its output otherwise, and followers would see the log in 4 KiB steps).
unbuffered=
command -v stdbuf > /dev/null 2>&1 && unbuffered='stdbuf -o0'
cap() {
  local size
  while :; do
    $unbuffered head -c "$half" > "$1" || break
    size=$(wc -c < "$1") || break
    [ "$size" -ge "$half" ] || break
    mv -f -- "$1" "$1.1"
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

rm -f -- "$dir/.stdout.pipe" "$dir/.stderr.pipe"
if ! mkfifo -m 600 -- "$dir/.stdout.pipe" "$dir/.stderr.pipe"; then
  finish "error:cannot create the output pipes in $dir"
  exit 0
fi
( trap '' TERM INT HUP; cap "$dir/stdout.log" ) < "$dir/.stdout.pipe" &
cap_out=$!
( trap '' TERM INT HUP; cap "$dir/stderr.log" ) < "$dir/.stderr.pipe" &
cap_err=$!
(
  # This subshell becomes the routine (exec keeps the pid and the start time), so it records
  # itself: it is alive while it reads its own /proc entry, however soon the routine exits.
  trap - TERM INT HUP QUIT
  me=$BASHPID
  cs=$(starttime "$me")
  printf '{"wrapperPid":%s,"wrapperStartTime":%s,"pid":%s,"startTime":%s}\\n' \\
    $$ "\${ws:-null}" "$me" "\${cs:-null}" > "$dir/.pid.json.tmp" \\
    && mv -f -- "$dir/.pid.json.tmp" "$dir/pid.json"
  if [ -n "$had_path" ]; then PATH=$given_path; else unset PATH; fi
  exec "$setsid_bin" -- "$@"
) > "$dir/.stdout.pipe" 2> "$dir/.stderr.pipe" < /dev/null &
child=$!

while :; do
  trapped=0
  wait "$child"
  status=$?
  [ "$trapped" = 1 ] || break
done

if [ "$status" -gt 128 ] && [ "$status" -le 192 ] && name=$(kill -l "$status" 2>/dev/null); then
  result="signal:$name"
else
  result=$status
fi

# Let the captured output drain before the sentinel, but never wait long for it: a grandchild
# left running may hold the pipes open for as long as it lives.
for ((i = 0; i < 40; i++)); do
  kill -0 "$cap_out" 2>/dev/null || kill -0 "$cap_err" 2>/dev/null || break
  sleep 0.05
done

finish "$result"
wait "$cap_out" "$cap_err" 2>/dev/null
rm -f -- "$dir/.stdout.pipe" "$dir/.stderr.pipe"
exit 0
`;
}
