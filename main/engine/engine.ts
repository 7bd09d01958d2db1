// The engine as one object: store, backends, scheduler and its loop. The same code runs inside
// the Electron main process, under `tend daemon run`, and in tests.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createLocalBackend } from '../../worker/local/local-backend.js';
import type { Backend } from './backend.js';
import { systemClock, type Clock } from './clock.js';
import { paths } from './datadir.js';
import { localComputer } from './domain/schema.js';
import { Loop } from './loop.js';
import { cancelJob, restartRoutine, runNow, stopRoutine, type ControlDeps } from './ops/control.js';
import { DEFAULT_OPTIONS, type SchedulerOptions } from './scheduler/context.js';
import { Scheduler } from './scheduler/scheduler.js';
import { Store } from './store/store.js';
import { tendVersion } from './version.js';

export interface EngineConfig {
  dataDir: string;
  clock?: Clock;
  /** Extra or replacement backends (tests); `local` is created unless given. */
  backends?: Map<string, Backend>;
  intervalMs?: number;
  options?: Partial<Omit<SchedulerOptions, 'dataDir'>>;
  store?: Store;
}

export class Engine {
  readonly store: Store;
  readonly scheduler: Scheduler;
  readonly backends: Map<string, Backend>;
  readonly loop: Loop;
  readonly dataDir: string;
  readonly clock: Clock;
  readonly control: ControlDeps;

  constructor(cfg: EngineConfig) {
    this.dataDir = cfg.dataDir;
    this.clock = cfg.clock ?? systemClock;
    mkdirSync(paths(cfg.dataDir).runs, { recursive: true });
    this.store = cfg.store ?? Store.open(paths(cfg.dataDir).db);
    const opts: SchedulerOptions = {
      ...DEFAULT_OPTIONS,
      computer: localComputer(),
      owner: `pid:${process.pid}:${randomBytes(3).toString('hex')}`,
      ...cfg.options,
      dataDir: cfg.dataDir,
    };
    this.backends = new Map(cfg.backends ?? []);
    if (!this.backends.has('local')) {
      this.backends.set(
        'local',
        createLocalBackend({ dataDir: cfg.dataDir, tendVersion: tendVersion(), killGraceMs: opts.killGraceMs, onExit: () => this.loop.nudge() }),
      );
    }
    this.scheduler = new Scheduler(this.store, this.clock, this.backends, opts);
    this.loop = new Loop({ intervalMs: cfg.intervalMs ?? 1000, pass: () => this.scheduler.pass() });
    this.control = {
      store: this.store,
      backends: this.backends,
      now: () => this.clock.now(),
      killGraceMs: opts.killGraceMs,
      nudge: () => this.loop.nudge(),
    };
  }

  get bus() {
    return this.scheduler.bus;
  }

  start(): void {
    this.loop.start();
  }

  nudge(): void {
    this.loop.nudge();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  async close(): Promise<void> {
    await this.stop();
    await Promise.allSettled(this.scheduler.ctx.stopping.values());
    this.store.close();
  }

  runNow(id: string) {
    return runNow(this.control, id);
  }

  stopRoutine(id: string) {
    return stopRoutine(this.control, id);
  }

  restart(id: string) {
    return restartRoutine(this.control, id);
  }

  cancelJob(id: number) {
    return cancelJob(this.control, id);
  }
}
