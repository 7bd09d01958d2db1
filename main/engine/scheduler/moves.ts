// Every state change goes through the lifecycle tables and lands in SQL as compare-and-set.
import type { JobStatus, RoutineKind, RunStatus } from '../domain/types.js';
import {
  batchJobMachine,
  batchRunMachine,
  realtimeRunMachine,
  type BatchJobEvent,
  type BatchRunEvent,
  type Machine,
  type RealtimeRunEvent,
} from '../lifecycle/index.js';
import type { JobPatch } from '../store/jobs.js';
import type { RunPatch } from '../store/runs.js';
import type { Store } from '../store/store.js';

export type RunEvent = BatchRunEvent | RealtimeRunEvent;

/** The states `event` may leave, grouped by where it takes them: one compare-and-set per target. */
function targets(m: Machine<string, string>, event: string): Map<string, string[]> {
  const byTarget = new Map<string, string[]>();
  for (const from of m.fromStates(event)) {
    const to = m.table[from]![event]!;
    byTarget.set(to, [...(byTarget.get(to) ?? []), from]);
  }
  return byTarget;
}

/** Apply a lifecycle event to a run in SQL. Returns the new status, or null if the run was not in a state that takes it. */
export function moveRun(store: Store, id: string, kind: RoutineKind, event: RunEvent, patch: RunPatch = {}): RunStatus | null {
  const m = (kind === 'batch' ? batchRunMachine : realtimeRunMachine) as unknown as Machine<string, string>;
  for (const [to, from] of targets(m, event)) {
    if (store.runs.cas(id, from as RunStatus[], to as RunStatus, patch)) return to as RunStatus;
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
