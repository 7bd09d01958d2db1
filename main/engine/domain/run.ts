import { newRunId } from '../ids.js';
import { cycleDay } from '../timing/next.js';
import type { RoutineDef, RunRow } from './types.js';

export interface NewRunOptions {
  attempt?: number;
  manual?: boolean;
  notBefore?: number | null;
  /** Retries keep the cycle of the run they retry. */
  cycle?: string;
  /** A run id chosen by an external routine. */
  id?: string;
}

/** A fresh run of a routine: batch runs start PENDING, realtime instances STARTING. */
export function newRun(def: RoutineDef, scheduledAt: number, now: number, o: NewRunOptions = {}): RunRow {
  return {
    id: o.id ?? newRunId(now),
    routineId: def.id,
    kind: def.kind,
    cycle: o.cycle ?? cycleDay(scheduledAt, def.tz),
    scheduledAt,
    attempt: o.attempt ?? 1,
    status: def.kind === 'batch' ? 'PENDING' : 'STARTING',
    reason: null,
    exitCode: null,
    signal: null,
    backend: null,
    runDir: null,
    manual: o.manual ?? false,
    notBefore: o.notBefore ?? null,
    createdAt: now,
    startedAt: null,
    endedAt: null,
    heartbeatAt: null,
  };
}
