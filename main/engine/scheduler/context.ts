import type { Backend } from '../backend.js';
import type { Clock } from '../clock.js';
import { EventLog } from '../events/log.js';
import type { Store } from '../store/store.js';
import { BackendSet } from './backend-set.js';
import { Definitions } from './definitions.js';
import { Launches } from './launches.js';

export interface SchedulerOptions {
  /** Bound on jobs in flight across all schedules. */
  maxParallel: number;
  /** Claims older than this return to their queue. */
  leaseTimeoutMs: number;
  /** TERM → KILL grace when stopping jobs. */
  killGraceMs: number;
  /** A due time further in the past than this is a misfire (downtime, sleep). */
  misfireAfterMs: number;
  /** `misfire: all` replays at most this many missed instants. */
  misfireAllCap: number;
  /** This host's computer (`user@HOST`): routines addressed to it run on the local backend. */
  computer: string;
  /** Lease owner id of this process. */
  owner: string;
  dataDir: string;
  /** Wall time moving this much further than monotonic time between passes is a clock jump or a sleep (off when unset). */
  clockJumpMs?: number;
  /** One-off batch jobs this host runs itself at once (the in-process worker's --batchjobs); default maxParallel. */
  batchSlots?: number;
  /** Bound on a backend's poll, fetch and health calls, so one hung backend cannot stall the loop. */
  backendTimeoutMs?: number;
  /** A remote worker not heard from for longer than this is away (Settings.workerOfflineMs). */
  workerOfflineMs: number;
  /**
   * Launches finish after the pass that claimed them (recorded in the ledger when the backend
   * answers, then `Ctx.onLaunched`), so a slow launch never holds up settling and restarting.
   * Off: the pass waits for its launches and records them itself (the Engine turns it on).
   */
  launchInBackground?: boolean;
}

/** What the scheduler calls out to, given by whoever builds it (the Engine). */
export interface SchedulerHooks {
  /** Creates backends met for the first time (a worker pool backend per remote computer). */
  makeBackend?: (name: string) => Backend | undefined;
  /** Called once a background launch is recorded (the Engine nudges a pass). */
  onLaunched?: () => void;
}

export const DEFAULT_OPTIONS: Omit<SchedulerOptions, 'computer' | 'owner' | 'dataDir'> = {
  maxParallel: 8,
  leaseTimeoutMs: 60_000,
  killGraceMs: 10_000,
  misfireAfterMs: 60_000,
  misfireAllCap: 10,
  clockJumpMs: 10_000,
  backendTimeoutMs: 30_000,
  workerOfflineMs: 30_000,
};

export type { EngineEvents } from '../events/bus.js';

export interface PassReport {
  at: number;
  durationMs: number;
  fired: number;
  submitted: number;
  settled: number;
  faults: number;
  /** Milliseconds spent in each step, for metrics and benchmarks. */
  steps: Record<string, number>;
}

/**
 * What every phase of the pass shares: the store and the clock, the definitions it schedules, the
 * event log it writes, what it has launched or is stopping, and the backends it reaches.
 */
export class Ctx {
  readonly defs = new Definitions();
  readonly events: EventLog;
  readonly launches: Launches;
  readonly backends: BackendSet;

  constructor(
    readonly store: Store,
    readonly clock: Clock,
    backends: Map<string, Backend>,
    readonly opts: SchedulerOptions,
    hooks: SchedulerHooks = {},
  ) {
    this.events = new EventLog(store, clock);
    this.launches = new Launches(hooks.onLaunched);
    this.backends = new BackendSet(backends, opts.computer, opts.backendTimeoutMs, hooks.makeBackend ?? null);
  }
}
