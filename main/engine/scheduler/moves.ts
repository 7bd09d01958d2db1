// Every state change goes through the lifecycle tables and lands in SQL as compare-and-set.
import type { JobStatus, RoutineKind, RunStatus, TriggerRow, TriggerState } from '../domain/types.js';
import {
  batchJobMachine,
  batchRunMachine,
  realtimeRunMachine,
  triggerMachine,
  type BatchJobEvent,
  type BatchRunEvent,
  type Machine,
  type RealtimeRunEvent,
  type TriggerEvent,
} from '../lifecycle/index.js';
import type { JobPatch } from '../store/jobs.js';
import type { TriggerPatch } from '../store/routines.js';
import type { RunPatch, SettlingRun } from '../store/runs.js';
import type { Store } from '../store/store.js';

export type RunEvent = BatchRunEvent | RealtimeRunEvent;

/** The states `event` may leave, grouped by where it takes them: one compare-and-set per target. */
function targets(m: Machine<string, string>, event: string): Map<string, string[]> {
  // The tables are constant: worked out once per machine and event (the pass moves every run twice).
  let byEvent = known.get(m);
  if (!byEvent) known.set(m, (byEvent = new Map()));
  let byTarget = byEvent.get(event);
  if (byTarget) return byTarget;
  byTarget = new Map<string, string[]>();
  for (const from of m.fromStates(event)) {
    const to = m.table[from]![event]!;
    const states = byTarget.get(to);
    if (states) states.push(from);
    else byTarget.set(to, [from]);
  }
  byEvent.set(event, byTarget);
  return byTarget;
}
const known = new WeakMap<Machine<string, string>, Map<string, Map<string, string[]>>>();

/**
 * Apply a lifecycle event to a run in SQL. Returns the new status, or null if the run was not in a
 * state that takes it. `read`: the run as read in the caller's transaction (RunStore.cas).
 */
export function moveRun(store: Store, id: string, kind: RoutineKind, event: RunEvent, patch: RunPatch = {}, read?: SettlingRun): RunStatus | null {
  const m = (kind === 'batch' ? batchRunMachine : realtimeRunMachine) as unknown as Machine<string, string>;
  for (const [to, from] of targets(m, event)) {
    if (store.runs.cas(id, from as RunStatus[], to as RunStatus, patch, read)) return to as RunStatus;
  }
  return null;
}

export function moveJob(store: Store, id: number, event: BatchJobEvent, patch: JobPatch = {}, now = Date.now()): JobStatus | null {
  const m = batchJobMachine as unknown as Machine<string, string>;
  for (const [to, from] of targets(m, event)) {
    if (store.jobs.cas(id, from as JobStatus[], to as JobStatus, patch, now)) return to as JobStatus;
  }
  return null;
}

/**
 * Apply a lifecycle event to a trigger in SQL, from the state it was read in: callers decide the
 * patch from what they read (an `every` loop is re-armed only while scheduled), so the move holds
 * only while the trigger is still in that state. Returns the new state, or null if nothing changed: the event
 * is not allowed from that state, the state is terminal (it absorbs the event), or the row moved.
 */
export function moveTrigger(store: Store, read: Pick<TriggerRow, 'routineId' | 'state'>, event: TriggerEvent, patch: TriggerPatch = {}, now = Date.now()): TriggerState | null {
  const r = triggerMachine.transition(read.state, event);
  if (!r.ok || r.absorbed) return null;
  return store.routines.casTrigger(read.routineId, [read.state], r.state, patch, now) ? r.state : null;
}
