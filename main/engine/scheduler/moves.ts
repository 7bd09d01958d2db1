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

function targets<S extends string, E extends string>(m: Machine<S, E>, event: E): Map<S, S[]> {
  const byTarget = new Map<S, S[]>();
  for (const from of m.fromStates(event)) {
    const to = m.table[from][event] as S;
    byTarget.set(to, [...(byTarget.get(to) ?? []), from]);
  }
  return byTarget;
}

const cache = new Map<string, Map<string, string[]>>();
function plan(kind: string, m: Machine<string, string>, event: string): Map<string, string[]> {
  const key = `${kind}:${event}`;
  let p = cache.get(key);
  if (!p) {
    p = targets(m, event);
    cache.set(key, p);
  }
  return p;
}

/** Apply a lifecycle event to a run in SQL. Returns the new status, or null if the run was not in a state that takes it. */
export function moveRun(store: Store, id: string, kind: RoutineKind, event: RunEvent, patch: RunPatch = {}): RunStatus | null {
  const m = (kind === 'batch' ? batchRunMachine : realtimeRunMachine) as unknown as Machine<string, string>;
  for (const [to, from] of plan(kind, m, event)) {
    if (store.runs.cas(id, from as RunStatus[], to as RunStatus, patch)) return to as RunStatus;
  }
  return null;
}

export function moveJob(store: Store, id: number, event: BatchJobEvent, patch: JobPatch = {}, now = Date.now()): JobStatus | null {
  const m = batchJobMachine as unknown as Machine<string, string>;
  for (const [to, from] of plan('job', m, event)) {
    if (store.jobs.cas(id, from as JobStatus[], to as JobStatus, patch, now)) return to as JobStatus;
  }
  return null;
}
