// One process instance of a realtime routine. A restart is a NEW instance (a new run row); the
// old one ends EXITED (died, or declared dead after heartbeat silence), STOPPED (stopped by hand)
// or ERROR (launch failed, or the crash loop was given up on this instance).
//
//   STARTING ──started──▶ RUNNING ──exit──▶ EXITED
//      │ exit ▶ EXITED       ├──stop──▶ STOPPED
//      │ stop ▶ STOPPED      └──give_up──▶ ERROR
//      │ launch_failed ▶ ERROR
//      ├ give_up ▶ ERROR
//      └ unsent ▶ STARTING (never handed over: it waits for its worker, then is sent again)
//
// Terminal: EXITED, STOPPED, ERROR.

import type { RealtimeRunStatus } from '../domain/types.js';
import { defineMachine, type TransitionResult, type TransitionTable } from './machine.js';

export const REALTIME_RUN_STATES = ['STARTING', 'RUNNING', 'EXITED', 'STOPPED', 'ERROR'] as const satisfies readonly RealtimeRunStatus[];

export const REALTIME_RUN_EVENTS = [
  /** Observed running (first heartbeat, or a live process when heartbeats are off). */
  'started',
  /** The process died (any exit code or signal) or was declared dead after heartbeat silence. */
  'exit',
  /** Stopped by hand. */
  'stop',
  /** The launch failed or the worker refused it. */
  'launch_failed',
  /** Crash loop: no more restarts; this instance ends in ERROR. */
  'give_up',
  /** Never handed over (its start command expired unfetched): it never ran, and is sent again later. */
  'unsent',
] as const;

export type RealtimeRunEvent = (typeof REALTIME_RUN_EVENTS)[number];

export const REALTIME_RUN_TERMINAL = ['EXITED', 'STOPPED', 'ERROR'] as const satisfies readonly RealtimeRunStatus[];

export const REALTIME_RUN_TRANSITIONS: TransitionTable<RealtimeRunStatus, RealtimeRunEvent> = {
  STARTING: { started: 'RUNNING', exit: 'EXITED', stop: 'STOPPED', launch_failed: 'ERROR', give_up: 'ERROR', unsent: 'STARTING' },
  RUNNING: { exit: 'EXITED', stop: 'STOPPED', give_up: 'ERROR' },
  EXITED: {},
  STOPPED: {},
  ERROR: {},
};

export const realtimeRunMachine = defineMachine<RealtimeRunStatus, RealtimeRunEvent>({
  name: 'realtime run',
  states: REALTIME_RUN_STATES,
  events: REALTIME_RUN_EVENTS,
  terminal: REALTIME_RUN_TERMINAL,
  table: REALTIME_RUN_TRANSITIONS,
});

export function isRealtimeRunTerminal(state: RealtimeRunStatus): boolean {
  return realtimeRunMachine.isTerminal(state);
}

export function realtimeRunTransition(
  state: RealtimeRunStatus,
  event: RealtimeRunEvent,
): TransitionResult<RealtimeRunStatus, RealtimeRunEvent> {
  return realtimeRunMachine.transition(state, event);
}
