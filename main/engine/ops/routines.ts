// Definitions: create, edit, remove, pause, resume, clear. Used by the CLI (no daemon needed),
// the HTTP API and the desktop app alike. Validation happens before anything is stored.
import { checkDependencies } from '../graph/dependencies.js';
import { parseRoutine, toInput, type NormalizeContext } from '../domain/schema.js';
import type { RoutineDef, TriggerRow } from '../domain/types.js';
import { invalid, notFound, TendError, type Issue } from '../errors.js';
import type { ArmedTrigger } from '../store/routines.js';
import type { Store } from '../store/store.js';
import { nextRunAt } from '../timing/next.js';
import { isTriggerTerminal, triggerMachine } from '../lifecycle/index.js';
import { moveRun, moveTrigger } from '../scheduler/moves.js';

export type SaveMode = 'create' | 'update' | 'upsert';

/** The trigger a definition starts with: computed at definition time, from `now`. */
export function initialTrigger(def: RoutineDef, now: number, prev: TriggerRow | null): ArmedTrigger {
  let nextRun: number | null = null;
  if (def.timing?.mode === 'at') nextRun = Date.parse(def.timing.at);
  else if (def.timing) nextRun = nextRunAt(def.timing, now, def.tz);
  const keepPaused = prev?.state === 'paused';
  return {
    routineId: def.id,
    state: keepPaused ? 'paused' : 'scheduled',
    nextRunAt: def.kind === 'batch' ? nextRun : null,
    firstDueAt: null,
    lastFiredAt: prev?.lastFiredAt ?? null,
    attempts: 0,
    lastError: prev?.lastError ?? null,
    lastErrorAt: prev?.lastErrorAt ?? null,
    failCount: prev?.failCount ?? 0,
  };
}

/**
 * A retry waits as a PENDING run with a later attempt and a not-before time. Once the policy it
 * was queued under changes, it is cancelled: the new policy decides from the next failure on.
 */
export function cancelQueuedRetries(store: Store, prev: RoutineDef, def: RoutineDef, now: number): string[] {
  if (JSON.stringify(prev.retry) === JSON.stringify(def.retry)) return [];
  const cancelled: string[] = [];
  for (const run of store.runs.activeFor(def.id)) {
    if ((run.status !== 'PENDING' && run.status !== 'DELAYED') || run.attempt <= 1 || run.notBefore === null) continue;
    if (!moveRun(store, run.id, 'batch', 'cancel', { reason: 'retry policy changed', endedAt: now })) continue;
    store.events.append({ type: 'run:cancelled', routineId: def.id, runId: run.id, message: `attempt ${run.attempt} cancelled: the retry policy changed` }, now);
    cancelled.push(run.id);
  }
  return cancelled;
}

function sameTiming(a: RoutineDef, b: RoutineDef): boolean {
  return JSON.stringify([a.timing, a.tz, a.kind]) === JSON.stringify([b.timing, b.tz, b.kind]);
}

/**
 * Dependency problems (unknown, other schedule, self, cycles) once `defs` replace the stored ones.
 * Paths are rewritten from the checker's list indices to `prefix(i)` of the def being saved.
 */
export function dependencyIssues(existing: RoutineDef[], defs: RoutineDef[], prefix: (i: number) => string = () => ''): Issue[] {
  const replacing = new Set(defs.map((d) => d.id));
  const stored = existing.filter((d) => !replacing.has(d.id));
  const universe = [...stored, ...defs];
  return checkDependencies(universe).map((issue) => {
    const m = /^routines\.(\d+)(?:\.dependencies(?:\.(\d+))?)?/.exec(issue.path);
    const k = m ? Number(m[1]) - stored.length : -1;
    if (k < 0) return { path: prefix(0) ? `${prefix(0)}.after` : 'after', message: issue.message };
    const head = prefix(k) ? `${prefix(k)}.` : '';
    return { path: m![2] !== undefined ? `${head}after.${m![2]}` : `${head}after`, message: issue.message };
  });
}

export function saveRoutine(store: Store, input: unknown, ctx: NormalizeContext, mode: SaveMode = 'upsert'): { def: RoutineDef; result: 'created' | 'updated' } {
  const def = parseRoutine(input, ctx);
  const existing = store.routines.get(def.id);
  if (mode === 'create' && existing) throw new TendError('CONFLICT', `routine ${def.id} already exists (use edit)`);
  if (mode === 'update' && !existing) throw notFound(`routine ${def.id}`);
  const issues = dependencyIssues(store.routines.allDefs(), [def]);
  if (existing && existing.schedule !== def.schedule) {
    const dependents = store.routines.dependents(def.id);
    if (dependents.length) issues.push({ path: 'schedule', message: `cannot move: ${dependents.join(', ')} depend on it in ${existing.schedule}` });
  }
  if (issues.length) throw invalid(issues);
  const result = store.tx(() => {
    const r = store.routines.save(def, ctx.now);
    if (existing) cancelQueuedRetries(store, existing, def, ctx.now);
    const prev = store.routines.trigger(def.id);
    if (!existing || !prev || !sameTiming(existing, def)) store.routines.saveTrigger(initialTrigger(def, ctx.now, prev), ctx.now);
    store.events.append({ type: `routine:${r}`, routineId: def.id, message: `routine ${r}` }, ctx.now);
    return r;
  });
  return { def, result };
}

/** `edit`: the stored definition's fields, overlaid with the given ones; a field given as null is cleared. */
export function editRoutine(store: Store, id: string, changes: Record<string, unknown>, ctx: NormalizeContext): RoutineDef {
  const existing = store.routines.get(id);
  if (!existing) throw notFound(`routine ${id}`);
  const base = toInput(existing) as Record<string, unknown>;
  // Choosing a new timing mode replaces the old one.
  const modes = ['runtimes', 'cron', 'every', 'at', 'in'];
  if (modes.some((m) => changes[m] !== undefined) || changes.realtime === true) for (const m of modes) delete base[m];
  // Back to batch: realtime-only settings go with the realtime mode.
  if (changes.realtime === false) {
    delete base.realtime;
    delete base.heartbeat;
    delete base.grace;
  }
  const merged: Record<string, unknown> = { ...base, ...changes, id };
  // `null` clears an optional field (a timeout, a revision…) back to its default.
  for (const [k, v] of Object.entries(merged)) if (v === undefined || v === null) delete merged[k];
  return saveRoutine(store, merged, ctx, 'update').def;
}

export function removeRoutine(store: Store, id: string, now: number): void {
  const def = store.routines.get(id);
  if (!def) throw notFound(`routine ${id}`);
  const dependents = store.routines.dependents(id);
  if (dependents.length) throw new TendError('CONFLICT', `cannot remove ${id}: ${dependents.join(', ')} depend on it`);
  store.tx(() => {
    store.routines.remove(id);
    store.events.append({ type: 'routine:removed', routineId: id, message: 'routine removed' }, now);
  });
}

export function pauseRoutine(store: Store, id: string, now: number): TriggerRow {
  return setTriggerState(store, id, now, 'pause');
}

export function resumeRoutine(store: Store, id: string, now: number): TriggerRow {
  return setTriggerState(store, id, now, 'resume');
}

function setTriggerState(store: Store, id: string, now: number, action: 'pause' | 'resume'): TriggerRow {
  const def = store.routines.get(id);
  if (!def) throw notFound(`routine ${id}`);
  return store.tx(() => {
    let t = store.routines.trigger(id);
    if (!t) {
      // Only a row written by hand or by another version lacks one: arm it as its definition would.
      const armed = initialTrigger(def, now, null);
      store.routines.saveTrigger(armed, now);
      t = armed;
    }
    if (isTriggerTerminal(t.state)) throw new TendError('CONFLICT', `cannot ${action} ${id}: its trigger is ${t.state} (clear it first)`);
    // Pausing what is paused, or resuming what is scheduled, is done already: nothing moves.
    if (!triggerMachine.can(t.state, action)) return t;
    // Resuming recomputes future cron/interval timing from the resume time (seed 002).
    const fresh = initialTrigger(def, now, null);
    const patch = action === 'resume' ? { nextRunAt: def.timing?.mode === 'at' ? t.nextRunAt ?? fresh.nextRunAt : fresh.nextRunAt } : {};
    if (!moveTrigger(store, t, action, patch, now)) throw new TendError('CONFLICT', `cannot ${action} ${id}: its trigger changed meanwhile`);
    if (action === 'pause') store.events.append({ type: 'routine:paused', routineId: id, message: 'paused' }, now);
    else store.events.append({ type: 'routine:resumed', routineId: id, message: 'resumed' }, now);
    return store.routines.trigger(id)!;
  });
}

/** `clear`: delete the trigger's state and failure metadata; it is re-armed from now. No audit state. */
export function clearRoutine(store: Store, id: string, now: number): TriggerRow {
  const def = store.routines.get(id);
  if (!def) throw notFound(`routine ${id}`);
  return store.tx(() => {
    store.routines.deleteTrigger(id);
    const t = initialTrigger(def, now, null);
    if (def.timing?.mode === 'at' && t.nextRunAt !== null && t.nextRunAt < now) t.nextRunAt = now;
    store.routines.saveTrigger(t, now);
    store.events.append({ type: 'routine:cleared', routineId: id, message: 'trigger state cleared' }, now);
    return t;
  });
}
