// The engine as one object: store, scheduler and its loop, over the backends its host gives it
// (host/backends.ts; this file imports none). The same code runs inside the Electron main
// process, under `tend daemon run`, and in tests.
import type { Backend } from './backend.js';
import { systemClock, type Clock } from './clock.js';
import { paths } from './datadir.js';
import { makePrivateDir } from './owner-only.js';
import { localComputer } from './domain/computer.js';
import { randomBytes } from './lazy-crypto.js';
import { Loop } from './loop.js';
import { Retention, type RetentionOptions } from './retention.js';
import { runFiles, type RunFiles } from './run-files.js';
import { Wake } from './pool/wake.js';
import type { NewEvent } from './store/events.js';
import { cancelJob, restartRoutine, runNow, stopRoutine, type ControlDeps } from './ops/control.js';
import { DEFAULT_OPTIONS, type SchedulerOptions } from './scheduler/context.js';
import { Scheduler } from './scheduler/scheduler.js';
import { settings, type Settings } from './settings.js';
import { WalCheckpoints } from './store/checkpoint.js';
import { IntegrityChecks } from './store/integrity.js';
import { Store } from './store/store.js';

/** The parts of the engine a backend may call back into, handed to the host's backend factory. */
export interface BackendHooks {
  readonly dataDir: string;
  readonly store: Store;
  readonly clock: Clock;
  /** TERM → KILL grace of the scheduler's options. */
  readonly killGraceMs: number;
  /** The engine's settings (the pool's command TTL and online rule). */
  readonly settings: Settings;
  /** A waiter this process started has exited: its run can be settled now. */
  exited(runId: string): void;
  /** A command was queued for a worker host: answer its long poll at once. */
  wakeWorker(computer: string): void;
}

/** The backends work runs on. */
export interface Backends {
  /** By name: `local`, `slurm`, test doubles. */
  named: Map<string, Backend>;
  /** A backend met for the first time (`pool:<computer>`: a worker host), or undefined. */
  create?: (name: string) => Backend | undefined;
}

export interface EngineConfig {
  dataDir: string;
  clock?: Clock;
  /** Builds the backends, once the store is open (the host's choice: host/backends.ts). */
  backends: (hooks: BackendHooks) => Backends;
  intervalMs?: number;
  options?: Partial<Omit<SchedulerOptions, 'dataDir'>>;
  store?: Store;
  /** History retention (the daemon and the app keep 30 days, TEND_KEEP_DAYS); unset keeps everything. */
  retention?: RetentionOptions;
  /** The process's settings (read once at start; tests pass their own); default: the defaults. */
  settings?: Settings;
}

/** A launch recorded is looked at within this (its process shown RUNNING), by a pass of its own if none came. */
const LAUNCH_LOOK_MS = 50;

export class Engine {
  readonly store: Store;
  readonly scheduler: Scheduler;
  readonly backends: Map<string, Backend>;
  readonly loop: Loop;
  readonly dataDir: string;
  readonly clock: Clock;
  readonly control: ControlDeps;
  /** Long polls of remote workers wait on this. */
  readonly wake = new Wake();
  readonly retention: Retention;
  /** The full integrity check of tend.db, run off the event loop (after an unclean shutdown, for the doctor). */
  readonly integrity: IntegrityChecks;
  /** The WAL checkpoint of the store's connection, run between passes while the loop runs. */
  readonly checkpoints: WalCheckpoints;
  readonly settings: Settings;
  /** Runs' and jobs' output and manifests, read through the backend that ran them. */
  readonly runFiles: RunFiles = runFiles((name) => this.scheduler.ctx.backends.get(name));

  constructor(cfg: EngineConfig) {
    this.dataDir = cfg.dataDir;
    this.clock = cfg.clock ?? systemClock;
    const s = (this.settings = cfg.settings ?? settings());
    makePrivateDir(paths(cfg.dataDir).runs);
    this.store = cfg.store ?? Store.open(paths(cfg.dataDir).db);
    this.integrity = new IntegrityChecks(this.store.db.name, () => this.clock.now());
    this.checkpoints = new WalCheckpoints(this.store.db);
    const opts: SchedulerOptions = {
      ...DEFAULT_OPTIONS,
      maxParallel: s.maxParallel,
      ...(s.batchSlots !== null ? { batchSlots: s.batchSlots } : {}),
      killGraceMs: s.killGraceMs,
      computer: localComputer(),
      owner: `pid:${process.pid}:${randomBytes(3).toString('hex')}`,
      launchInBackground: true,
      ...cfg.options,
      // One online rule for the scheduler and everything reading engine.settings.
      workerOfflineMs: s.workerOfflineMs,
      dataDir: cfg.dataDir,
    };
    const backends = cfg.backends({
      dataDir: cfg.dataDir,
      store: this.store,
      clock: this.clock,
      killGraceMs: opts.killGraceMs,
      settings: s,
      exited: (runId) => this.exited(runId),
      wakeWorker: (computer) => this.wake.commandsFor(computer),
    });
    this.backends = backends.named;
    this.scheduler = new Scheduler(this.store, this.clock, this.backends, opts, {
      makeBackend: backends.create,
      // Looked at by the next pass: one comes at once while jobs flow (their exits nudge it).
      onLaunched: () => this.loop.nudgeWithin(LAUNCH_LOOK_MS),
    });
    // A job that becomes PENDING (or a pass that may have promoted some) answers waiting workers.
    this.scheduler.bus.on('event', (e) => {
      if (e.type === 'job:posted' || e.type === 'job:pending' || e.type === 'lease:released') this.wake.jobsAvailable();
    });
    // What was launched is looked at by the next pass at once: a started process shows RUNNING
    // now rather than a timed pass later (nothing else nudges before it exits).
    this.scheduler.bus.on('pass', (p) => {
      this.wake.jobsAvailable();
      if (p.submitted > 0 && !opts.launchInBackground) this.loop.nudge();
    });
    this.retention = new Retention(this.store, cfg.dataDir, this.clock, cfg.retention ?? { keepDays: null }, (e) => this.log(e));
    this.loop = new Loop({
      intervalMs: cfg.intervalMs ?? s.intervalMs,
      pass: () => this.scheduler.pass(),
      between: () => this.betweenPasses(),
    });
    this.control = {
      store: this.store,
      backends: this.scheduler.ctx.backends,
      now: () => this.clock.now(),
      killGraceMs: opts.killGraceMs,
      commandTtlMs: s.commandTtlMs,
      nudge: () => this.loop.nudge(),
      wakeWorker: (c) => this.wake.commandsFor(c),
    };
  }

  get bus() {
    return this.scheduler.bus;
  }

  /**
   * A waiter this process started has exited. A realtime routine's replacement starts from a
   * micro-pass (that run settled, the next submitted) without waiting for a pass; a full pass
   * follows either way for everything else the exit may unblock.
   */
  private exited(runId: string): void {
    if (!this.loop.running) return; // stopped (or not started): the next daemon settles it
    void this.scheduler.settleExited(runId).then(() => this.loop.nudge());
  }

  /** Append to the logging plane and publish to listeners (the UI, SSE) once committed. */
  log(e: NewEvent): void {
    this.scheduler.ctx.events.log(e);
  }

  /** Backends the health gate holds paused, with why (their work waits). */
  pausedBackends(): ReadonlyMap<string, string> {
    return this.scheduler.ctx.backends.paused;
  }

  /** A transaction whose logged events are published after commit. */
  tx<T>(fn: () => T): T {
    return this.scheduler.ctx.events.tx(fn);
  }

  /**
   * A slice of the work between passes: the WAL checkpoint when one is due (at least one slice
   * follows every pass, however often passes are asked for, so it is never put off for long), then
   * a slice of the history sweep.
   */
  private async betweenPasses(): Promise<boolean> {
    try {
      this.checkpoints.step();
    } catch (err) {
      this.log({ type: 'pass:fault', message: `checkpoint: ${err instanceof Error ? err.message : String(err)}` });
    }
    return this.sweepHistory();
  }

  /** A slice of the history sweep, between passes, never inside one: a failed sweep is logged and tried again later. */
  private async sweepHistory(): Promise<boolean> {
    try {
      return await this.retention.step();
    } catch (err) {
      this.log({ type: 'history:failed', message: `removing old history failed: ${err instanceof Error ? err.message : String(err)}` });
      return false;
    }
  }

  start(): void {
    // The checkpoint moves out of the commits (the pass's among them) while passes run between which to make it.
    this.checkpoints.own();
    this.loop.start();
  }

  nudge(): void {
    this.loop.nudge();
  }

  /**
   * No pass starts after; before this resolves, launches in flight are recorded in the ledger,
   * settles of exited waiters are done, and cancels in flight (the pass's and the one-click
   * operations') have seen their process gone.
   */
  async stop(): Promise<void> {
    this.integrity.stop();
    await this.loop.stop();
    await this.scheduler.quiesce();
    await Promise.allSettled([...this.scheduler.ctx.launches.launching.values()].map((l) => l.done));
    await this.inFlightDone();
    // What the last passes wrote goes into tend.db, and the connection's commits checkpoint again.
    this.checkpoints.release();
  }

  /** Stop, then close the store. */
  async close(): Promise<void> {
    await this.stop();
    this.store.close();
  }

  /** Cancels of the pass and operations (stop, restart, cancel) in flight; waits for any started meanwhile too. */
  private async inFlightDone(): Promise<void> {
    while (this.scheduler.ctx.launches.stopping.size > 0 || this.operations.size > 0) {
      await Promise.allSettled([...this.scheduler.ctx.launches.stopping.values(), ...this.operations]);
    }
  }

  private readonly operations = new Set<Promise<unknown>>();

  /** An operation that stops processes: the stop order waits for it. */
  private tracked<T>(p: Promise<T>): Promise<T> {
    this.operations.add(p);
    const done = () => void this.operations.delete(p);
    p.then(done, done);
    return p;
  }

  runNow(id: string) {
    return runNow(this.control, id);
  }

  stopRoutine(id: string) {
    return this.tracked(stopRoutine(this.control, id));
  }

  restart(id: string) {
    return this.tracked(restartRoutine(this.control, id));
  }

  cancelJob(id: number) {
    return this.tracked(cancelJob(this.control, id));
  }
}
