// One-off batch job (seed 000 "batch jobs"; DESIGN.md "Batch job"). NEW is not stored: a job is
// created WAITING (it has dependencies) or PENDING (it has none, or they all completed).
//
//   WAITING ──ready──▶ PENDING ──claim──▶ FETCHED ──start──▶ RUNNING ──succeed──▶ COMPLETED
//      │ dep_failed ▶ CANCEL     ▲ release  │ launch_failed ▶ ERROR    └──fail──▶ ERROR
//                                └──────────┘ (stale lease: back to its queue)
//   WAITING | PENDING | FETCHED | RUNNING ──cancel──▶ CANCEL
//
// FETCHED also takes `launch_failed` → ERROR: the worker claimed it and could not start it
// (the batch-run analogue of STARTING → ERROR). Terminal: COMPLETED, ERROR, CANCEL.

import type { JobStatus } from '../domain/types.js';
import { defineMachine, type TransitionResult, type TransitionTable } from './machine.js';

export const BATCH_JOB_STATES = ['WAITING', 'PENDING', 'FETCHED', 'RUNNING', 'COMPLETED', 'ERROR', 'CANCEL'] as const satisfies readonly JobStatus[];

export const BATCH_JOB_EVENTS = [
  /** Every dependency COMPLETED: promoted to its queue. */
  'ready',
  /** Claimed by a worker (lease taken). */
  'claim',
  /** Submitted to its backend by the worker that holds the lease. */
  'start',
  /** The lease went stale: the job returns to its queue. */
  'release',
  'succeed',
  'fail',
  /** The claiming worker could not start it (refused, spawn failed). */
  'launch_failed',
  /** A dependency ended ERROR or CANCEL. */
  'dep_failed',
  /** Cancelled by hand. */
  'cancel',
] as const;

export type BatchJobEvent = (typeof BATCH_JOB_EVENTS)[number];

export const BATCH_JOB_TERMINAL = ['COMPLETED', 'ERROR', 'CANCEL'] as const satisfies readonly JobStatus[];

export const BATCH_JOB_TRANSITIONS: TransitionTable<JobStatus, BatchJobEvent> = {
  WAITING: { ready: 'PENDING', dep_failed: 'CANCEL', cancel: 'CANCEL' },
  PENDING: { claim: 'FETCHED', cancel: 'CANCEL' },
  FETCHED: { start: 'RUNNING', release: 'PENDING', launch_failed: 'ERROR', cancel: 'CANCEL' },
  RUNNING: { succeed: 'COMPLETED', fail: 'ERROR', cancel: 'CANCEL' },
  COMPLETED: {},
  ERROR: {},
  CANCEL: {},
};

export const batchJobMachine = defineMachine<JobStatus, BatchJobEvent>({
  name: 'batch job',
  states: BATCH_JOB_STATES,
  events: BATCH_JOB_EVENTS,
  terminal: BATCH_JOB_TERMINAL,
  table: BATCH_JOB_TRANSITIONS,
});

export function isBatchJobTerminal(state: JobStatus): boolean {
  return batchJobMachine.isTerminal(state);
}

export function batchJobTransition(state: JobStatus, event: BatchJobEvent): TransitionResult<JobStatus, BatchJobEvent> {
  return batchJobMachine.transition(state, event);
}
