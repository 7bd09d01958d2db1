// One instance of a batch routine (DESIGN.md "Run"; seed 000 lifecycles).
//
//   PENDING ──launch──▶ STARTING ──started──▶ RUNNING ──succeed──▶ COMPLETED
//      │ late              │  │ launch_failed     └──fail──▶ ERROR (non-zero, signal, timeout,
//      ▼                   │  └──▶ ERROR                          promised output missing)
//   DELAYED ──launch──▶ STARTING
//   STARTING ──unsent──▶ PENDING (never handed over: it waits, DELAYED once late, no attempt spent)
//   PENDING | DELAYED | STARTING | RUNNING ──cancel──▶ CANCELLED (stopped by hand, or skipped)
//
// STARTING also takes `succeed`/`fail` directly: a job can exit before any pass observes it
// running (the check step then finds its exit_code sentinel already written), exactly like a
// realtime STARTING → EXITED. Terminal: COMPLETED, ERROR, CANCELLED.

import type { BatchRunStatus } from '../domain/types.js';
import { defineMachine, type TransitionResult, type TransitionTable } from './machine.js';

export const BATCH_RUN_STATES = ['PENDING', 'DELAYED', 'STARTING', 'RUNNING', 'COMPLETED', 'ERROR', 'CANCELLED'] as const satisfies readonly BatchRunStatus[];

export const BATCH_RUN_EVENTS = [
  /** Due but not started within the routine's tolerance. */
  'late',
  /** The start command was sent / the job was submitted to its backend. */
  'launch',
  /** The run was observed running (lifecycle message, live process). */
  'started',
  /** Exit code 0 and every promised output present. */
  'succeed',
  /** Non-zero exit, signal, timeout, or a promised output missing. */
  'fail',
  /** The launch failed or the worker refused it (e.g. revision mismatch). */
  'launch_failed',
  /** Stopped by hand, or skipped (misfire/overlap policy); the reason says which. */
  'cancel',
  /** Never handed over (its start command expired unfetched): it never ran, and is sent again later. */
  'unsent',
] as const;

export type BatchRunEvent = (typeof BATCH_RUN_EVENTS)[number];

export const BATCH_RUN_TERMINAL = ['COMPLETED', 'ERROR', 'CANCELLED'] as const satisfies readonly BatchRunStatus[];

export const BATCH_RUN_TRANSITIONS: TransitionTable<BatchRunStatus, BatchRunEvent> = {
  PENDING: { late: 'DELAYED', launch: 'STARTING', cancel: 'CANCELLED' },
  DELAYED: { launch: 'STARTING', cancel: 'CANCELLED' },
  STARTING: { started: 'RUNNING', succeed: 'COMPLETED', fail: 'ERROR', launch_failed: 'ERROR', cancel: 'CANCELLED', unsent: 'PENDING' },
  RUNNING: { succeed: 'COMPLETED', fail: 'ERROR', cancel: 'CANCELLED' },
  COMPLETED: {},
  ERROR: {},
  CANCELLED: {},
};

export const batchRunMachine = defineMachine<BatchRunStatus, BatchRunEvent>({
  name: 'batch run',
  states: BATCH_RUN_STATES,
  events: BATCH_RUN_EVENTS,
  terminal: BATCH_RUN_TERMINAL,
  table: BATCH_RUN_TRANSITIONS,
});

export function isBatchRunTerminal(state: BatchRunStatus): boolean {
  return batchRunMachine.isTerminal(state);
}

export function batchRunTransition(state: BatchRunStatus, event: BatchRunEvent): TransitionResult<BatchRunStatus, BatchRunEvent> {
  return batchRunMachine.transition(state, event);
}
