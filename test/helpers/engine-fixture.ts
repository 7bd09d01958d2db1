// A real Scheduler over a real Store (in memory or a SQLite file), a ManualClock and a TestBackend.
// Tests drive time by hand and call `pass()` directly: no sleeping, no loop.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend } from '../../main/engine/backend.js';
import { ManualClock } from '../../main/engine/clock.js';
import type { RoutineDef, RunRow, TriggerRow } from '../../main/engine/domain/types.js';
import type { ControlDeps } from '../../main/engine/ops/control.js';
import { saveRoutine } from '../../main/engine/ops/routines.js';
import { DEFAULT_OPTIONS, type PassReport, type SchedulerOptions } from '../../main/engine/scheduler/context.js';
import { Scheduler } from '../../main/engine/scheduler/scheduler.js';
import { DEFAULT_SETTINGS } from '../../main/engine/settings.js';
import type { EventRow } from '../../main/engine/store/events.js';
import { Store } from '../../main/engine/store/store.js';
import { TestBackend } from './test-backend.js';

/** Monday 2026-01-05 09:00:00 UTC: on a whole minute, far from any DST change (routines use UTC). */
export const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
export const SEC = 1000;
export const MIN = 60 * SEC;
export const HOUR = 60 * MIN;
export const COMPUTER = 'me@host';

export interface FixtureOptions {
  /** A SQLite file path; `:memory:` by default. */
  db?: string;
  /** Share a store (a second Scheduler on the same connection). */
  store?: Store;
  clock?: ManualClock;
  backend?: TestBackend;
  options?: Partial<SchedulerOptions>;
  /** Backends met for the first time (e.g. a real pool backend over this fixture's store). */
  makeBackend?: (name: string, fx: Fixture) => Backend | undefined;
}

export class Fixture {
  readonly clock: ManualClock;
  readonly store: Store;
  readonly backend: TestBackend;
  readonly scheduler: Scheduler;
  readonly opts: SchedulerOptions;

  constructor(o: FixtureOptions = {}) {
    this.clock = o.clock ?? new ManualClock(T0);
    this.store = o.store ?? Store.open(o.db ?? ':memory:');
    this.backend = o.backend ?? new TestBackend('local', { clock: this.clock });
    this.opts = { ...DEFAULT_OPTIONS, computer: COMPUTER, owner: 'test-owner', dataDir: '/nonexistent/tend-test', ...o.options };
    const make = o.makeBackend;
    this.scheduler = new Scheduler(this.store, this.clock, new Map([['local', this.backend]]), this.opts, make ? { makeBackend: (name) => make(name, this) } : {});
  }

  now(): number {
    return this.clock.now();
  }

  advance(ms: number): this {
    this.clock.advance(ms);
    return this;
  }

  pass(): Promise<PassReport> {
    return this.scheduler.pass();
  }

  /** Define a routine (UTC unless given); `id` may be a short path. */
  define(input: Record<string, unknown>): RoutineDef {
    const id = String(input.id);
    const full = id.includes(':') ? id : `${COMPUTER}:${id}`;
    return saveRoutine(this.store, { command: 'true', tz: 'UTC', ...input, id: full }, { now: this.now(), localComputer: COMPUTER }).def;
  }

  /** Runs of a routine, oldest first. */
  runs(routineId: string): RunRow[] {
    return this.store.runs.history(full(routineId), 10_000).reverse();
  }

  run(id: string): RunRow {
    const r = this.store.runs.get(id);
    if (!r) throw new Error(`no run ${id}`);
    return r;
  }

  /** The only run of a routine (fails the test if there is not exactly one). */
  only(routineId: string): RunRow {
    const rs = this.runs(routineId);
    if (rs.length !== 1) throw new Error(`expected exactly one run of ${routineId}, got ${rs.length}: ${rs.map((r) => r.status).join(', ')}`);
    return rs[0]!;
  }

  latest(routineId: string): RunRow {
    const r = this.store.runs.latest(full(routineId));
    if (!r) throw new Error(`no run of ${routineId}`);
    return r;
  }

  trigger(routineId: string): TriggerRow {
    const t = this.store.routines.trigger(full(routineId));
    if (!t) throw new Error(`no trigger for ${routineId}`);
    return t;
  }

  /** Events oldest first, optionally of one type. */
  events(type?: string): EventRow[] {
    return this.store.events.after(0, 100_000).filter((e) => !type || e.type === type);
  }

  control(): ControlDeps {
    return { store: this.store, backends: new Map([['local', this.backend]]), now: () => this.now(), killGraceMs: this.opts.killGraceMs, commandTtlMs: DEFAULT_SETTINGS.commandTtlMs, nudge: () => undefined };
  }

  close(): void {
    this.store.close();
  }
}

export function full(routineId: string): string {
  return routineId.includes(':') ? routineId : `${COMPUTER}:${routineId}`;
}

/** A scratch directory for SQLite files; remove it in afterEach. */
export function scratch(prefix = 'tend-sched-'): { dir: string; db: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, db: join(dir, 'tend.db'), remove: () => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }) };
}
