// The Backend contract of seed 001. Handles are JSON-safe values (a pid + start time and a run
// dir, a scheduler job id): a fresh process must be able to poll a job it did not start from the
// ledger alone. Nothing here may hold a socket, a ChildProcess or any other in-memory object.
import type { SlurmOptions } from './domain/slurm.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Handle = { [key: string]: Json };

export interface JobSpec {
  /** Run id (routines) or `job-<id>` (batch jobs); unique, stable across restarts. */
  runId: string;
  kind: 'run' | 'job';
  /** An instance of a realtime routine (restarted when it dies: a backend may prepare for that). */
  realtime?: boolean;
  routineId: string | null;
  jobId: number | null;
  attempt: number;
  command: string;
  args: string[];
  cwd: string | null;
  env: Record<string, string>;
  scheduledAt: number;
  /** Directory the backend owns for this job: `<data>/runs/<day>/<run-id>/`. */
  runDir: string;
  logCapBytes: number;
  outputs: string[];
  revision: string | null;
  /** Arguments with secret-looking values masked, for manifests and logs. */
  maskedArgs: string[];
  /** Options for the Slurm backend (sbatch flags); other backends ignore them. */
  slurm?: SlurmOptions | null;
}

export type PollState =
  /** Accepted by the backend, not running yet (a cluster queue). */
  | { state: 'queued' }
  /** heartbeatAt: last liveness signal the job gave (realtime routines), when the backend sees one. */
  | { state: 'running'; startedAt: number | null; heartbeatAt?: number | null }
  /** Finished: `fetch` gives the outcome. */
  | { state: 'done' }
  /** The backend has no trace of it (never launched, or its record is gone). */
  | { state: 'lost'; reason: string }
  /** Never handed over (a start command that expired unfetched): it never ran, so it waits to be sent again. */
  | { state: 'unsent'; reason: string };

export interface Outcome {
  exitCode: number | null;
  signal: string | null;
  /** Human reason for a non-success (timeout, promised output missing, Slurm state …). */
  reason: string | null;
  startedAt: number | null;
  endedAt: number | null;
}

export interface ProcessIdentity {
  pid: number | null;
  /** /proc/<pid>/stat field 22, clock ticks after boot. */
  startTime: number | null;
}

/** manifest.json of a job directory: what a backend recorded about a launch, secrets masked. */
export interface Manifest extends Pick<JobSpec, 'runId' | 'kind' | 'routineId' | 'jobId' | 'attempt' | 'command' | 'scheduledAt' | 'logCapBytes' | 'outputs' | 'revision'> {
  manifestVersion: 1;
  backend: 'local';
  tendVersion: string;
  /** `spec.maskedArgs`: the raw arguments are never written to disk. */
  args: string[];
  /** The working directory the routine runs in (the run dir when the spec gives none). */
  cwd: string;
  /** Names of the variables the spec sets (values are never written); TEND_* are always set. */
  envNames: string[];
  createdAt: number;
  bootId: string | null;
  wrapper: ProcessIdentity;
  routine: ProcessIdentity;
  /** Wall-clock start of the routine (from its /proc start time), once known. */
  startedAt: number | null;
}

export type LogStream = 'stdout' | 'stderr';

export interface LogFollowOptions {
  /** Newest bytes already written to yield first (default 64 KiB; 0 = only new output). */
  tailBytes?: number;
  /** Applied to that tail before it is yielded (e.g. keep its last N lines). */
  tailFilter?: (text: string) => string;
  signal?: AbortSignal;
}

export interface Health {
  ok: boolean;
  reason: string | null;
}

export interface Backend {
  readonly name: string;
  /** Cheap to call, but only called for stages with waiting work (backlog gate first). */
  health(): Promise<Health>;
  /** Launch; resolves with the durable handle. A rejection is a launch failure for that job. */
  submit(spec: JobSpec): Promise<Handle>;
  /** Poll many handles at once (one cluster query per pass, not one per job). */
  poll(handles: Handle[]): Promise<PollState[]>;
  fetch(handle: Handle): Promise<Outcome>;
  /** Stop the whole job (TERM, then KILL after graceMs); resolves once it is gone. */
  cancel(handle: Handle, graceMs: number): Promise<void>;
  /**
   * A job's captured output, read where this backend keeps it; `runDir` is the directory its run
   * or job row records (on another host for a worker's run). Also after the job settled: no handle.
   * The newest `maxBytes` of a stream:
   */
  tailLog(runDir: string, stream: LogStream, maxBytes: number): string | Promise<string>;
  /** A stream as it is written, starting with its newest `tailBytes`, until the job is over (or `signal` aborts). */
  followLog(runDir: string, stream: LogStream, opts?: LogFollowOptions): AsyncIterable<string>;
  /** The job's manifest (what was launched, its processes), or null. */
  readManifest(runDir: string): Manifest | null | Promise<Manifest | null>;
}

/** Backends by name (made when first asked for, where the owner makes them so). */
export interface BackendLookup {
  get(name: string): Backend | undefined;
}

/** Success means exit code 0 and no reason recorded against it. */
export function isSuccess(outcome: Outcome): boolean {
  return outcome.exitCode === 0 && outcome.signal === null && outcome.reason === null;
}

/** One line that says how a job ended, for events and the UI. */
export function describeOutcome(outcome: Outcome): string {
  if (outcome.reason) return outcome.reason;
  if (outcome.signal) return `killed by ${outcome.signal}`;
  if (outcome.exitCode === 0) return 'exit 0';
  if (outcome.exitCode === null) return 'exit status unknown';
  return `exit ${outcome.exitCode}`;
}
