// Trigger state of a routine's schedule (seed 002): scheduled, paused, fired, failed, cancelled.
// `clear` deletes the trigger row; it is not a transition.
//
//   scheduled ──pause──▶ paused ──resume──▶ scheduled
//   scheduled ──fire──▶ scheduled                (a due time is taken: its runs are created and the
//              next due time is set, or none while an `every` loop's run or a one-shot is out)
//   scheduled ──succeed_once──▶ fired            (a one-shot delivered)
//   scheduled ──fail_exhausted──▶ failed         (a one-shot's retry window is over)
//   scheduled ──succeed_recurring | fail_retry | fail_recurring──▶ scheduled   (self-loops: the
//              next run time / retry time and the failure metadata change, the state does not)
//   scheduled | paused ──cancel──▶ cancelled
//
// A claimed attempt can finish after a pause arrived: its outcome still counts, so `paused` takes
// the same outcome events (succeed_once → fired, fail_exhausted → failed, the others stay paused).
// Dropping it would let a delivered one-shot fire again on resume.
// Terminal: fired, failed, cancelled.
//
// Applied in SQL by scheduler/moves.ts `moveTrigger` (a compare-and-set from the state the trigger
// was read in). Only a definition (a new routine, a changed timing) and `clear` write a trigger
// whole, and only as scheduled or paused.

import type { TriggerState } from '../domain/types.js';
import { defineMachine, type TransitionResult, type TransitionTable } from './machine.js';

export const TRIGGER_STATES = ['scheduled', 'paused', 'fired', 'failed', 'cancelled'] as const satisfies readonly TriggerState[];

export const TRIGGER_EVENTS = [
  'pause',
  'resume',
  /** A due time was taken (paused triggers are not due). */
  'fire',
  /** A one-shot (`at`/`in`) attempt succeeded. */
  'succeed_once',
  /** A recurring (runtimes/cron/every) attempt succeeded; the next cadence is computed. */
  'succeed_recurring',
  /** An attempt failed within its routine's retry window (a retry is queued unless paused). */
  'fail_retry',
  /** A one-shot attempt failed and retries are exhausted. */
  'fail_exhausted',
  /**
   * A failure that does not end the trigger: a recurring attempt's (next cadence computed) or a
   * run's started by hand. Failure metadata kept.
   */
  'fail_recurring',
  'cancel',
] as const;

export type TriggerEvent = (typeof TRIGGER_EVENTS)[number];

export const TRIGGER_TERMINAL = ['fired', 'failed', 'cancelled'] as const satisfies readonly TriggerState[];

export const TRIGGER_TRANSITIONS: TransitionTable<TriggerState, TriggerEvent> = {
  scheduled: {
    pause: 'paused',
    fire: 'scheduled',
    succeed_once: 'fired',
    succeed_recurring: 'scheduled',
    fail_retry: 'scheduled',
    fail_exhausted: 'failed',
    fail_recurring: 'scheduled',
    cancel: 'cancelled',
  },
  paused: {
    resume: 'scheduled',
    succeed_once: 'fired',
    succeed_recurring: 'paused',
    fail_retry: 'paused',
    fail_exhausted: 'failed',
    fail_recurring: 'paused',
    cancel: 'cancelled',
  },
  fired: {},
  failed: {},
  cancelled: {},
};

export const triggerMachine = defineMachine<TriggerState, TriggerEvent>({
  name: 'trigger',
  states: TRIGGER_STATES,
  events: TRIGGER_EVENTS,
  terminal: TRIGGER_TERMINAL,
  table: TRIGGER_TRANSITIONS,
});

export function isTriggerTerminal(state: TriggerState): boolean {
  return triggerMachine.isTerminal(state);
}

export function triggerTransition(state: TriggerState, event: TriggerEvent): TransitionResult<TriggerState, TriggerEvent> {
  return triggerMachine.transition(state, event);
}
