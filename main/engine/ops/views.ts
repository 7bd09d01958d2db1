// Read models shared by the CLI, the HTTP API and the UI.
import { maskArgs, maskEnv } from '../mask.js';
import type { RoutineDef, RunRow, TriggerRow } from '../domain/types.js';
import { notFound } from '../errors.js';
import type { Store } from '../store/store.js';
import { dailyOrder } from '../graph/daily-order.js';
import { cycleDay, nextRuns } from '../timing/next.js';
import { machineTimeZone } from '../timing/tz.js';

export interface RoutineSummary {
  id: string;
  name: string;
  schedule: string;
  computer: string;
  kind: 'batch' | 'realtime';
  external: boolean;
  observeOnly: boolean;
  trigger: TriggerRow['state'] | null;
  nextRun: string | null;
  /** Status of today's latest run (batch: today's cycle in the routine's tz; realtime: latest instance). */
  today: RunRow['status'] | null;
  lastRun: RunSummary | null;
  /** A failed run's next attempt, when one is queued: its time and its number of at most `maxAttempts`. */
  retry: { at: string; attempt: number; maxAttempts: number } | null;
  dependencies: string[];
}

export interface RunSummary {
  id: string;
  status: RunRow['status'];
  attempt: number;
  scheduledAt: string;
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
  exitCode: number | null;
  signal: string | null;
  reason: string | null;
  heartbeatAt: string | null;
  manual: boolean;
  runDir: string | null;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function runSummary(r: RunRow): RunSummary {
  return {
    id: r.id,
    status: r.status,
    attempt: r.attempt,
    scheduledAt: new Date(r.scheduledAt).toISOString(),
    startedAt: iso(r.startedAt),
    endedAt: iso(r.endedAt),
    durationMs: r.startedAt !== null && r.endedAt !== null ? r.endedAt - r.startedAt : null,
    exitCode: r.exitCode,
    signal: r.signal,
    reason: r.reason,
    heartbeatAt: iso(r.heartbeatAt),
    manual: r.manual,
    runDir: r.runDir,
  };
}

/** A definition as shown anywhere outside the store: secrets masked. */
export function publicDef(def: RoutineDef): RoutineDef {
  return { ...def, args: maskArgs(def.args), env: maskEnv(def.env) };
}

/** Routines in their daily run order (run times and dependencies), schedule by schedule. */
export function listRoutines(store: Store, now: number): RoutineSummary[] {
  const triggers = new Map(store.routines.triggers().map((t) => [t.routineId, t]));
  const schedules = new Map(store.routines.schedules().map((s) => [s.name, s]));
  const ordered = orderedDefs(store, cycleDay(now, machineTimeZone()));
  const latest = store.runs.latestPerRoutine();
  return ordered.map((def) => summarize(def, triggers.get(def.id) ?? null, schedules.get(def.schedule)?.mode === 'observe', latest.get(def.id) ?? null, now));
}

const orderCache = new WeakMap<Store, { key: string; defs: RoutineDef[] }>();

/** Definitions in daily run order, recomputed only when the definitions or the day change. */
function orderedDefs(store: Store, day: string): RoutineDef[] {
  const key = `${store.routines.defsVersion()}|${day}`;
  const hit = orderCache.get(store);
  if (hit?.key === key) return hit.defs;
  const defs = store.routines.allDefs();
  const rank = new Map(dailyOrder(defs, day).map((e, i) => [e.id, i]));
  const sorted = defs.sort((a, b) => (a.schedule < b.schedule ? -1 : a.schedule > b.schedule ? 1 : (rank.get(a.id) ?? 0) - (rank.get(b.id) ?? 0)));
  orderCache.set(store, { key, defs: sorted });
  return sorted;
}

/** `last` is the routine's newest run; today's status is its status when it belongs to today's cycle. */
function summarize(def: RoutineDef, t: TriggerRow | null, observeOnly: boolean, last: RunRow | null, now: number): RoutineSummary {
  const today = def.kind === 'realtime' ? last : last && last.cycle === cycleDay(now, def.tz) ? last : null;
  return {
    id: def.id,
    name: def.name,
    schedule: def.schedule,
    computer: def.computer,
    kind: def.kind,
    external: def.external,
    observeOnly,
    trigger: t?.state ?? null,
    nextRun: t && t.state === 'scheduled' ? iso(t.nextRunAt) : null,
    today: today?.status ?? null,
    lastRun: last ? runSummary(last) : null,
    retry: queuedRetry(def, last),
    dependencies: def.dependencies,
  };
}

/** A retry is the newest run: PENDING, not before its time, a later attempt of the same instance. */
function queuedRetry(def: RoutineDef, last: RunRow | null): RoutineSummary['retry'] {
  if (!last || last.status !== 'PENDING' || last.attempt < 2 || last.notBefore === null) return null;
  // Attempts fit in the window after the first one: at most one per delay.
  const maxAttempts = def.retry.delayMs > 0 ? 1 + Math.floor(def.retry.windowMs / def.retry.delayMs) : last.attempt;
  return { at: new Date(last.notBefore).toISOString(), attempt: last.attempt, maxAttempts: Math.max(maxAttempts, last.attempt) };
}

export interface RoutineDetail extends RoutineSummary {
  definition: RoutineDef;
  triggerState: TriggerRow | null;
  nextRuns: string[];
  history: RunSummary[];
  dependents: string[];
}

export function showRoutine(store: Store, id: string, now: number): RoutineDetail {
  const def = store.routines.get(id);
  if (!def) throw notFound(`routine ${id}`);
  const t = store.routines.trigger(id);
  const observe = store.routines.schedule(def.schedule)?.mode === 'observe';
  let upcoming: number[] = [];
  if (t?.state === 'scheduled' && t.nextRunAt !== null && def.timing) {
    upcoming = def.timing.mode === 'at' || def.timing.mode === 'every' ? [t.nextRunAt] : [t.nextRunAt, ...nextRuns(def.timing, t.nextRunAt, def.tz, 4)];
  }
  return {
    ...summarize(def, t, observe, store.runs.latestScheduled(id), now),
    definition: publicDef(def),
    triggerState: t,
    nextRuns: upcoming.map((ms) => new Date(ms).toISOString()),
    history: store.runs.history(id, 50).map(runSummary),
    dependents: store.routines.dependents(id),
  };
}
