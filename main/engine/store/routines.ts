import type { RoutineDef, Schedule, ScheduleMode, TriggerRow, TriggerState } from '../domain/types.js';
import { CompareAndSet } from './cas.js';
import type { DB } from './db.js';

/** A trigger as a definition arms it: live. Only a move (the trigger table) ends one. */
export type ArmedTrigger = TriggerRow & { state: 'scheduled' | 'paused' };

/** What a trigger move may change besides its state (scheduler/moves.ts `moveTrigger` picks the state). */
export type TriggerPatch = Partial<Omit<TriggerRow, 'routineId' | 'state'>>;

const PATCH_COLUMNS: Record<keyof TriggerPatch, string> = {
  nextRunAt: 'next_run_at',
  firstDueAt: 'first_due_at',
  lastFiredAt: 'last_fired_at',
  attempts: 'attempts',
  lastError: 'last_error',
  lastErrorAt: 'last_error_at',
  failCount: 'fail_count',
};

interface TriggerRecord {
  routine_id: string;
  state: TriggerState;
  next_run_at: number | null;
  first_due_at: number | null;
  last_fired_at: number | null;
  attempts: number;
  last_error: string | null;
  last_error_at: number | null;
  fail_count: number;
}

function toTrigger(r: TriggerRecord): TriggerRow {
  return {
    routineId: r.routine_id,
    state: r.state,
    nextRunAt: r.next_run_at,
    firstDueAt: r.first_due_at,
    lastFiredAt: r.last_fired_at,
    attempts: r.attempts,
    lastError: r.last_error,
    lastErrorAt: r.last_error_at,
    failCount: r.fail_count,
  };
}

/** A trigger that is due: the part of its row that firing reads. */
export type DueTrigger = Pick<TriggerRow, 'routineId' | 'state' | 'nextRunAt' | 'firstDueAt'>;

/** Definitions (schedules, routines, dependencies) and their trigger state. */
export class RoutineStore {
  private readonly s;
  private readonly moves: CompareAndSet<TriggerPatch>;
  constructor(private readonly db: DB) {
    this.moves = new CompareAndSet<TriggerPatch>(db, 'triggers', PATCH_COLUMNS, ['updated_at = @now'], undefined, { id: 'routine_id', status: 'state' });
    this.s = {
      defsVersion: db.prepare(`SELECT value FROM meta WHERE key = 'defs_version'`).pluck(),
      bumpDefs: db.prepare(`UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'defs_version'`),
      allDefs: db.prepare(`SELECT def FROM routines ORDER BY schedule, seq`).pluck(),
      getDef: db.prepare(`SELECT def FROM routines WHERE id = ?`).pluck(),
      maxSeq: db.prepare(`SELECT COALESCE(MAX(seq), 0) FROM routines WHERE schedule = ?`).pluck(),
      insert: db.prepare(`INSERT INTO routines (id, schedule, name, computer, kind, external, def, seq, created_at, updated_at)
        VALUES (@id, @schedule, @name, @computer, @kind, @external, @def, @seq, @now, @now)`),
      update: db.prepare(`UPDATE routines SET schedule=@schedule, name=@name, computer=@computer, kind=@kind,
        external=@external, def=@def, updated_at=@now WHERE id=@id`),
      remove: db.prepare(`DELETE FROM routines WHERE id = ?`),
      clearDeps: db.prepare(`DELETE FROM routine_deps WHERE routine_id = ?`),
      addDep: db.prepare(`INSERT OR IGNORE INTO routine_deps (routine_id, depends_on) VALUES (?, ?)`),
      dependents: db.prepare(`SELECT routine_id FROM routine_deps WHERE depends_on = ?`).pluck(),
      schedules: db.prepare(`SELECT name, mode, max_parallel FROM schedules ORDER BY name`),
      getSchedule: db.prepare(`SELECT name, mode, max_parallel FROM schedules WHERE name = ?`),
      ensureSchedule: db.prepare(`INSERT OR IGNORE INTO schedules (name, created_at) VALUES (?, ?)`),
      setMode: db.prepare(`UPDATE schedules SET mode = ? WHERE name = ?`),
      setMaxParallel: db.prepare(`UPDATE schedules SET max_parallel = ? WHERE name = ?`),
      dropEmptySchedule: db.prepare(`DELETE FROM schedules WHERE name = ? AND name <> 'default' AND NOT EXISTS (SELECT 1 FROM routines WHERE schedule = ?)`),
      trigger: db.prepare(`SELECT * FROM triggers WHERE routine_id = ?`),
      retryState: db.prepare(`SELECT attempts != 0 OR first_due_at IS NOT NULL FROM triggers WHERE routine_id = ?`).pluck(),
      triggers: db.prepare(`SELECT * FROM triggers`),
      // Only what firing reads: each column of each row read costs as much as SQLite's whole search.
      dueTriggers: db.prepare(`SELECT routine_id, next_run_at, first_due_at FROM triggers WHERE state = 'scheduled' AND next_run_at <= ? ORDER BY next_run_at LIMIT ?`),
      nextDue: db.prepare(`SELECT MIN(next_run_at) FROM triggers WHERE state = 'scheduled'`).pluck(),
      upsertTrigger: db.prepare(`INSERT INTO triggers (routine_id, state, next_run_at, first_due_at, last_fired_at, attempts, last_error, last_error_at, fail_count, updated_at)
        VALUES (@routineId, @state, @nextRunAt, @firstDueAt, @lastFiredAt, @attempts, @lastError, @lastErrorAt, @failCount, @now)
        ON CONFLICT (routine_id) DO UPDATE SET state=excluded.state, next_run_at=excluded.next_run_at, first_due_at=excluded.first_due_at,
          last_fired_at=excluded.last_fired_at, attempts=excluded.attempts, last_error=excluded.last_error,
          last_error_at=excluded.last_error_at, fail_count=excluded.fail_count, updated_at=excluded.updated_at`),
      deleteTrigger: db.prepare(`DELETE FROM triggers WHERE routine_id = ?`),
    };
  }

  defsVersion(): number {
    return Number(this.s.defsVersion.get());
  }

  bumpDefs(): void {
    this.s.bumpDefs.run();
  }

  allDefs(): RoutineDef[] {
    return (this.s.allDefs.all() as string[]).map((d) => JSON.parse(d) as RoutineDef);
  }

  get(id: string): RoutineDef | null {
    const d = this.s.getDef.get(id) as string | undefined;
    return d === undefined ? null : (JSON.parse(d) as RoutineDef);
  }

  /** Insert or replace a definition and its dependency rows. Caller holds the transaction. */
  save(def: RoutineDef, now: number): 'created' | 'updated' {
    this.s.ensureSchedule.run(def.schedule, now);
    const row = {
      id: def.id,
      schedule: def.schedule,
      name: def.name,
      computer: def.computer,
      kind: def.kind,
      external: def.external ? 1 : 0,
      def: JSON.stringify(def),
      now,
    };
    const existing = this.get(def.id);
    if (existing) this.s.update.run(row);
    else this.s.insert.run({ ...row, seq: Number(this.s.maxSeq.get(def.schedule)) + 1 });
    this.s.clearDeps.run(def.id);
    for (const dep of def.dependencies) this.s.addDep.run(def.id, dep);
    if (existing && existing.schedule !== def.schedule) this.s.dropEmptySchedule.run(existing.schedule, existing.schedule);
    this.bumpDefs();
    return existing ? 'updated' : 'created';
  }

  remove(id: string): boolean {
    const def = this.get(id);
    if (!def) return false;
    this.s.remove.run(id);
    this.s.dropEmptySchedule.run(def.schedule, def.schedule);
    this.bumpDefs();
    return true;
  }

  dependents(id: string): string[] {
    return this.s.dependents.all(id) as string[];
  }

  schedules(): Schedule[] {
    return (this.s.schedules.all() as { name: string; mode: 'active' | 'observe'; max_parallel: number | null }[]).map((r) => ({
      name: r.name,
      mode: r.mode,
      maxParallel: r.max_parallel,
    }));
  }

  schedule(name: string): Schedule | null {
    const r = this.s.getSchedule.get(name) as { name: string; mode: ScheduleMode; max_parallel: number | null } | undefined;
    return r ? { name: r.name, mode: r.mode, maxParallel: r.max_parallel } : null;
  }

  ensureSchedule(name: string, now: number): void {
    this.s.ensureSchedule.run(name, now);
  }

  setScheduleMode(name: string, mode: ScheduleMode): boolean {
    const changed = this.s.setMode.run(mode, name).changes > 0;
    if (changed) this.bumpDefs();
    return changed;
  }

  setScheduleMaxParallel(name: string, max: number | null): void {
    this.s.setMaxParallel.run(max, name);
    this.bumpDefs();
  }

  trigger(id: string): TriggerRow | null {
    const r = this.s.trigger.get(id) as TriggerRecord | undefined;
    return r ? toTrigger(r) : null;
  }

  /** Whether a failure left retry state on the trigger (attempts counted, a retry window open): false without a trigger. */
  hasRetryState(id: string): boolean {
    return this.s.retryState.get(id) === 1;
  }

  triggers(): TriggerRow[] {
    return (this.s.triggers.all() as TriggerRecord[]).map(toTrigger);
  }

  /** The scheduled triggers due by `now`, soonest first: what firing reads of each. */
  dueTriggers(now: number, limit: number): DueTrigger[] {
    return (this.s.dueTriggers.all(now, limit) as Pick<TriggerRecord, 'routine_id' | 'next_run_at' | 'first_due_at'>[]).map((r) => ({
      routineId: r.routine_id,
      state: 'scheduled',
      nextRunAt: r.next_run_at,
      firstDueAt: r.first_due_at,
    }));
  }

  nextDueAt(): number | null {
    return (this.s.nextDue.get() as number | null) ?? null;
  }

  /**
   * Write a trigger whole: only where a definition arms it (a new routine, a timing that changed)
   * and where `clear` re-arms it. Every other change is a move (scheduler/moves.ts `moveTrigger`).
   */
  saveTrigger(t: ArmedTrigger, now: number): void {
    this.s.upsertTrigger.run({ ...t, now });
  }

  /**
   * Compare-and-set: move a trigger from one of `from` to `to`, applying the patch. Returns false
   * when the trigger was no longer in an expected state (or has no row).
   */
  casTrigger(id: string, from: readonly TriggerState[], to: TriggerState, patch: TriggerPatch = {}, now = Date.now()): boolean {
    return this.moves.move(id, from, to, patch, { now });
  }

  deleteTrigger(id: string): void {
    this.s.deleteTrigger.run(id);
  }
}
