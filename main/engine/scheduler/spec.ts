import { join, sep } from 'node:path';
import type { JobSpec } from '../backend.js';
import type { JobRow, RoutineDef, RunRow } from '../domain/types.js';
import { utcDay } from '../ids.js';
import { maskArgs } from '../mask.js';

const JOB_LOG_CAP = 64 * 1024 * 1024;

/**
 * The run directory is a pure function of the run, so a resubmission after a crash finds it. Run
 * ids are Tend's own (newRunId, `job-<n>`): one plain name each, appended as it is (path.join
 * normalized the whole path on every call, a tenth of writing a fired run). Any other id is
 * refused: `..` or `a/b` would put a job's files outside its own directory.
 */
export function runDirFor(dataDir: string, runId: string, createdAt: number): string {
  if (!PLAIN_NAME.test(runId)) throw new Error(`not a run id: ${JSON.stringify(runId)} (one name of letters, digits, . _ -)`);
  let runs = runsDirs.get(dataDir);
  if (runs === undefined) runsDirs.set(dataDir, (runs = join(dataDir, 'runs')));
  return `${runs}${sep}${utcDay(createdAt)}${sep}${runId}`;
}
/** A path segment that join leaves as it is: no separator, not `.` or `..`, not empty. */
const PLAIN_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;
/** `<data dir>/runs` by data dir, normalized once (a process has one data dir, a test run a few). */
const runsDirs = new Map<string, string>();

export function runSpec(dataDir: string, run: RunRow, def: RoutineDef): JobSpec {
  return {
    runId: run.id,
    kind: 'run',
    realtime: def.kind === 'realtime',
    routineId: def.id,
    jobId: null,
    attempt: run.attempt,
    command: def.command,
    args: def.args,
    cwd: def.cwd,
    env: def.env,
    scheduledAt: run.scheduledAt,
    runDir: run.runDir ?? runDirFor(dataDir, run.id, run.createdAt),
    logCapBytes: def.logCapBytes,
    outputs: def.outputs,
    revision: def.revision,
    maskedArgs: maskArgs(def.args),
    slurm: def.slurm ?? null,
  };
}

export function jobSpec(dataDir: string, job: JobRow): JobSpec {
  const runId = `job-${job.id}`;
  return {
    runId,
    kind: 'job',
    routineId: null,
    jobId: job.id,
    attempt: 1,
    command: job.command,
    args: job.args,
    cwd: job.cwd,
    env: job.env,
    scheduledAt: job.createdAt,
    runDir: job.runDir ?? runDirFor(dataDir, runId, job.createdAt),
    logCapBytes: JOB_LOG_CAP,
    outputs: [],
    revision: null,
    maskedArgs: maskArgs(job.args),
    slurm: job.slurm,
  };
}
