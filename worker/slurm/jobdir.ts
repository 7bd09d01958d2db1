// A Slurm job's directory is a local job's directory (run.sh, manifest.json, pid.json, the
// streams, the exit_code sentinel, heartbeat, cancel.json, wrapper.log) plus two files:
//
//   <runDir>/slurm.sh     the batch script sbatch gets: starts run.sh on the node (below).
//                         Written just before sbatch: a directory holding it but no slurm.json
//                         may have been submitted, and is looked up by job name before any resubmit
//   <runDir>/slurm.json   {cluster, jobId, submittedAt, jobName}: written (tmp + rename) as soon as
//                         sbatch answered; a directory holding it has been submitted, and a
//                         resubmission adopts that job instead of submitting a second one
//
// manifest.json (backend "slurm", with the cluster, job id and the sbatch options) follows
// slurm.json; the processes' pids are in pid.json, written on the node.
//
// wrapper.log receives the batch script's own output and Slurm's messages about the job
// (`*** JOB 12 CANCELLED DUE TO TIME LIMIT ***`).
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jobPath, type Manifest } from '../jobdir/jobdir.js';
import { shQuote } from '../local/wrapper.js';

export const SLURM_FILES = {
  batchScript: 'slurm.sh',
  record: 'slurm.json',
} as const;

export function slurmPath(runDir: string, file: keyof typeof SLURM_FILES): string {
  return join(runDir, SLURM_FILES[file]);
}

/** The batch script exits with this when the node cannot see the job directory. */
export const EXIT_DIR_NOT_VISIBLE = 97;
/** … when the command passed through the environment is missing. */
export const EXIT_BAD_ARGV = 98;
/** … when run.sh ended without writing the sentinel. */
export const EXIT_NO_SENTINEL = 99;

export interface SlurmRecord {
  cluster: string;
  jobId: string;
  /** Epoch ms just before sbatch ran (older accounting rows with the same id are other jobs). */
  submittedAt: number;
  jobName: string;
}

export interface SlurmManifest extends Omit<Manifest, 'backend'> {
  backend: 'slurm';
  slurm: {
    cluster: string;
    jobId: string | null;
    jobName: string;
    submittedAt: number;
    /** The sbatch arguments Tend added for the routine's options (no secrets: options only). */
    sbatchArgs: string[];
  };
}

/**
 * Temp file + rename: a reader sees the old file or the new one, never half of one. Without the
 * local backend's fsync: a submit pass writes these for hundreds of jobs, each fsync blocks the
 * loop for milliseconds, and durability comes from elsewhere: the ledger (SQLite, synced) holds
 * the handle with the job id, and a record lost with the machine is found again by job name.
 */
export function writeFileReplacing(path: string, data: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data, { mode: 0o600 });
  renameSync(tmp, path);
}

export function readSlurmRecord(runDir: string): SlurmRecord | null {
  try {
    const v = JSON.parse(readFileSync(slurmPath(runDir, 'record'), 'utf8')) as Partial<SlurmRecord>;
    if (typeof v.jobId !== 'string' || !/^\d+$/.test(v.jobId) || typeof v.cluster !== 'string') return null;
    return { cluster: v.cluster, jobId: v.jobId, submittedAt: typeof v.submittedAt === 'number' ? v.submittedAt : 0, jobName: typeof v.jobName === 'string' ? v.jobName : '' };
  } catch {
    return null;
  }
}

export function writeSlurmRecord(runDir: string, rec: SlurmRecord): void {
  writeFileReplacing(slurmPath(runDir, 'record'), `${JSON.stringify(rec)}\n`);
}

/** Any manifest in the directory, whatever its backend (the local reader only returns local ones). */
export function readAnyManifest(runDir: string): { backend: string; value: Record<string, unknown> } | null {
  try {
    const value = JSON.parse(readFileSync(jobPath(runDir, 'manifest'), 'utf8')) as Record<string, unknown>;
    return typeof value === 'object' && value !== null ? { backend: String(value['backend']), value } : null;
  } catch {
    return null;
  }
}

export function readSlurmManifest(runDir: string): SlurmManifest | null {
  const m = readAnyManifest(runDir);
  return m && m.backend === 'slurm' ? (m.value as unknown as SlurmManifest) : null;
}

export function writeSlurmManifest(runDir: string, manifest: SlurmManifest): void {
  writeFileReplacing(jobPath(runDir, 'manifest'), `${JSON.stringify(manifest, null, 2)}\n`);
}

/**
 * The command and its arguments travel in the job's environment, one variable per argument
 * (TEND_SLURM_ARGC, TEND_SLURM_ARG_<i>; a value holds any byte but NUL, as an argument does), not
 * on sbatch's command line, where `squeue` and `scontrol show job` show them to every user.
 */
export function argvEnv(argv: string[]): Record<string, string> {
  const env: Record<string, string> = { TEND_SLURM_ARGC: String(argv.length) };
  argv.forEach((a, i) => (env[`TEND_SLURM_ARG_${i}`] = a));
  return env;
}

/**
 * The batch script. It runs in the foreground the same wrapper the local backend uses (run.sh:
 * its own session for the routine, captured and capped streams, pid.json, the atomic sentinel),
 * then exits with the routine's status, so that Slurm's accounting agrees with Tend (FAILED and
 * ExitCode 3:0 for an exit 3). Slurm signals every process of the job on scancel and at the time
 * limit; this script only waits for run.sh (a trapped signal is not inherited by it).
 */
export function batchScript(runDir: string): string {
  return `#!/usr/bin/env bash
# Tend job (Slurm backend). Generated at submit; do not edit.
set -u
PATH="\${PATH:+$PATH:}/usr/local/bin:/usr/bin:/bin"
dir=${shQuote(runDir)}
trap ':' TERM INT HUP
if [ ! -f "$dir/run.sh" ]; then
  printf 'tend: job directory %s is not visible on %s: is it on a filesystem this node mounts?\\n' "$dir" "$(hostname)" >&2
  exit ${EXIT_DIR_NOT_VISIBLE}
fi
argv=()
n=\${TEND_SLURM_ARGC:-0}
for ((i = 0; i < n; i++)); do
  var="TEND_SLURM_ARG_$i"
  [ -n "\${!var+x}" ] || { printf 'tend: argument %s of the command is missing from the environment\\n' "$i" >&2; exit ${EXIT_BAD_ARGV}; }
  argv+=("\${!var}")
  unset "$var"
done
unset TEND_SLURM_ARGC
if [ "\${#argv[@]}" -eq 0 ]; then
  printf 'tend: no command given\\n' >&2
  exit ${EXIT_BAD_ARGV}
fi
/bin/sh "$dir/run.sh" "\${argv[@]}"
code=
read -r code < "$dir/exit_code" 2> /dev/null || code=
case "$code" in
  '') exit ${EXIT_NO_SENTINEL} ;;
  signal:*)
    n=$(kill -l "\${code#signal:}" 2> /dev/null) || exit 1
    exit $((128 + n))
    ;;
  *[!0-9]*) exit 1 ;;
  *) exit "$code" ;;
esac
`;
}
