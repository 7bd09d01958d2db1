import { join, sep } from 'node:path';
import type { JobSpec } from '../backend.js';
import type { JobRow, RoutineDef, RunRow } from '../domain/types.js';
import { utcDay } from '../ids.js';
import { maskArgs } from '../mask.js';

const JOB_LOG_CAP = 64 * 1024 * 1024;

/** The run directory is a pure function of the run, so a resubmission after a crash finds it. */
export function runDirFor(dataDir: string, runId: string, createdAt: number): string {
  // join normalizes the whole path on every call (a tenth of writing a fired run): the data dir's
  // part is normalized once, and an id that is one plain name is appended as it is.
  if (!PLAIN_NAME.test(runId)) return join(dataDir, 'runs', utcDay(createdAt), runId);
  if (dataDir !== lastRoot.dataDir) lastRoot = { dataDir, runs: join(dataDir, 'runs') };
  return `${lastRoot.runs}${sep}${utcDay(createdAt)}${sep}${runId}`;
}
/** A path segment that join leaves as it is: no separator, not `.` or `..`, not empty. */
const PLAIN_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;
let lastRoot = { dataDir: '', runs: '' };

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
