// Lifecycle states as the UI shows them: order, tone, roll-up precedence. Pure data.
import type { JobStatus, RoutineSummary, RunStatus } from '../../../contract/calls.js';

/** Every run state of both lifecycles (batch and realtime), in lifecycle order. */
export const RUN_STATUSES = ['PENDING', 'DELAYED', 'STARTING', 'RUNNING', 'COMPLETED', 'ERROR', 'CANCELLED', 'EXITED', 'STOPPED'] as const satisfies readonly RunStatus[];

/** A routine with no run today yet. */
export const NOT_RUN = 'NOT RUN';
export type DisplayStatus = RunStatus | typeof NOT_RUN;

export const JOB_STATUSES = ['WAITING', 'PENDING', 'FETCHED', 'RUNNING', 'COMPLETED', 'ERROR', 'CANCEL'] as const satisfies readonly JobStatus[];

export type Tone = 'neutral' | 'info' | 'progress' | 'success' | 'warning' | 'danger' | 'muted';

export const TONE: Record<DisplayStatus | JobStatus, Tone> = {
  PENDING: 'neutral',
  WAITING: 'neutral',
  FETCHED: 'info',
  DELAYED: 'warning',
  STARTING: 'info',
  RUNNING: 'progress',
  COMPLETED: 'success',
  ERROR: 'danger',
  CANCELLED: 'muted',
  CANCEL: 'muted',
  EXITED: 'warning',
  STOPPED: 'muted',
  [NOT_RUN]: 'muted',
};

/** Worst first: the state a group of routines rolls up to. */
const PRECEDENCE: DisplayStatus[] = ['ERROR', 'DELAYED', 'EXITED', 'RUNNING', 'STARTING', 'PENDING', 'STOPPED', 'CANCELLED', 'COMPLETED', NOT_RUN];

export function worst(statuses: Iterable<DisplayStatus>): DisplayStatus {
  let best = PRECEDENCE.length - 1;
  for (const s of statuses) {
    const i = PRECEDENCE.indexOf(s);
    if (i >= 0 && i < best) best = i;
  }
  return PRECEDENCE[best]!;
}

export function displayStatus(r: Pick<RoutineSummary, 'today' | 'kind' | 'lastRun'>): DisplayStatus {
  if (r.today) return r.today;
  // A realtime routine's state is its latest instance whenever it ran.
  if (r.kind === 'realtime' && r.lastRun) return r.lastRun.status;
  return NOT_RUN;
}

export const ACTIVE_RUN: ReadonlySet<string> = new Set(['PENDING', 'DELAYED', 'STARTING', 'RUNNING']);
export const ACTIVE_JOB: ReadonlySet<string> = new Set(['WAITING', 'PENDING', 'FETCHED', 'RUNNING']);

export function isActiveRun(s: string | null | undefined): boolean {
  return s != null && ACTIVE_RUN.has(s);
}
