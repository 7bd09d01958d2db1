// The domain of DESIGN.md as stored, normalised values (times in epoch ms, durations in ms).
import type { SlurmOptions } from './slurm.js';

export type RoutineKind = 'batch' | 'realtime';

/** Exactly one mode for batch routines; realtime routines have no timing. */
export type Timing =
  | { mode: 'runtimes'; runtimes: string[] } // HH:MM, daily, in the routine's tz
  | { mode: 'cron'; cron: string } // 5 fields
  | { mode: 'every'; everyMs: number }
  | { mode: 'at'; at: string }; // ISO 8601; `in` is turned into an `at` when defined

export type MisfirePolicy = 'skip' | 'once' | 'all';
export type OverlapPolicy = 'skip' | 'queue-one' | 'allow';

export interface RetryPolicy {
  /** Delay between attempts; 0 disables retries. */
  delayMs: number;
  /** Retries stop this long after the first due time. */
  windowMs: number;
}

export interface RoutineDef {
  id: string; // user@COMPUTER:path/to/code
  name: string; // SCHED-page group
  schedule: string;
  computer: string; // user@COMPUTER
  kind: RoutineKind;
  external: boolean;
  command: string;
  args: string[];
  cwd: string | null;
  env: Record<string, string>;
  timing: Timing | null;
  tz: string;
  dependencies: string[]; // routine ids in the same schedule
  retry: RetryPolicy;
  misfire: MisfirePolicy;
  overlap: OverlapPolicy;
  timeoutMs: number | null;
  /** Realtime: heartbeat interval; null means liveness is the process alone. */
  heartbeatMs: number | null;
  /** Realtime: startup grace before heartbeat silence counts. */
  graceMs: number;
  /** Batch: due but not started after this long is DELAYED. */
  toleranceMs: number;
  logCapBytes: number;
  outputs: string[];
  revision: string | null;
  backend: string;
  /** With backend `slurm`: sbatch options (absent in definitions saved before Slurm support). */
  slurm?: SlurmOptions | null;
}

export type ScheduleMode = 'active' | 'observe';

export interface Schedule {
  name: string;
  mode: ScheduleMode;
  maxParallel: number | null;
}

export type TriggerState = 'scheduled' | 'paused' | 'fired' | 'failed' | 'cancelled';

export interface TriggerRow {
  routineId: string;
  state: TriggerState;
  nextRunAt: number | null;
  firstDueAt: number | null;
  lastFiredAt: number | null;
  attempts: number;
  lastError: string | null;
  lastErrorAt: number | null;
  failCount: number;
}

export type BatchRunStatus = 'PENDING' | 'DELAYED' | 'STARTING' | 'RUNNING' | 'COMPLETED' | 'ERROR' | 'CANCELLED';
export type RealtimeRunStatus = 'STARTING' | 'RUNNING' | 'EXITED' | 'STOPPED' | 'ERROR';
export type RunStatus = BatchRunStatus | RealtimeRunStatus;

export const ACTIVE_RUN_STATUSES = ['PENDING', 'DELAYED', 'STARTING', 'RUNNING'] as const;

export interface RunRow {
  id: string;
  routineId: string;
  kind: RoutineKind;
  cycle: string; // local day (routine tz) of the scheduled instant
  scheduledAt: number;
  attempt: number;
  status: RunStatus;
  reason: string | null;
  exitCode: number | null;
  signal: string | null;
  backend: string | null;
  runDir: string | null;
  manual: boolean;
  /** Retries and backoff: not submitted before this instant. */
  notBefore: number | null;
  createdAt: number;
  startedAt: number | null;
  endedAt: number | null;
  heartbeatAt: number | null;
}

export type JobStatus = 'WAITING' | 'PENDING' | 'FETCHED' | 'RUNNING' | 'COMPLETED' | 'ERROR' | 'CANCEL';

export interface JobRow {
  id: number;
  name: string;
  command: string;
  args: string[];
  cwd: string | null;
  env: Record<string, string>;
  computer: string | null;
  status: JobStatus;
  reason: string | null;
  exitCode: number | null;
  signal: string | null;
  runDir: string | null;
  backend: string | null;
  /** With backend `slurm`: sbatch options. */
  slurm?: SlurmOptions | null;
  dependencies: number[];
  createdAt: number;
  startedAt: number | null;
  endedAt: number | null;
}
