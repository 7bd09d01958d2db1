// Every row of every lifecycle table, written out here independently of the tables themselves:
// each allowed transition lands where it should, every other (non-terminal state, event) pair is
// rejected by value, and every terminal state absorbs every event.

import { describe, expect, it } from 'vitest';
import {
  BATCH_JOB_EVENTS,
  BATCH_JOB_TERMINAL,
  BATCH_JOB_TRANSITIONS,
  BATCH_RUN_EVENTS,
  BATCH_RUN_TERMINAL,
  BATCH_RUN_TRANSITIONS,
  REALTIME_RUN_EVENTS,
  REALTIME_RUN_TERMINAL,
  REALTIME_RUN_TRANSITIONS,
  TRIGGER_EVENTS,
  TRIGGER_TERMINAL,
  TRIGGER_TRANSITIONS,
  batchJobMachine,
  batchJobTransition,
  batchRunMachine,
  batchRunTransition,
  isBatchJobTerminal,
  isBatchRunTerminal,
  isRealtimeRunTerminal,
  isTriggerTerminal,
  realtimeRunMachine,
  realtimeRunTransition,
  triggerMachine,
  triggerTransition,
  type Machine,
  type TransitionTable,
} from '../../../main/engine/lifecycle/index.js';

type Row = readonly [from: string, event: string, to: string];

interface Case {
  name: string;
  machine: Machine<string, string>;
  transition: (s: string, e: string) => ReturnType<Machine<string, string>['transition']>;
  isTerminal: (s: string) => boolean;
  table: TransitionTable<string, string>;
  states: readonly string[];
  events: readonly string[];
  terminal: readonly string[];
  terminalConst: readonly string[];
  rows: readonly Row[];
}

const cases: Case[] = [
  {
    name: 'batch run',
    machine: batchRunMachine as unknown as Machine<string, string>,
    transition: batchRunTransition as unknown as Case['transition'],
    isTerminal: isBatchRunTerminal as (s: string) => boolean,
    table: BATCH_RUN_TRANSITIONS,
    states: ['PENDING', 'DELAYED', 'STARTING', 'RUNNING', 'COMPLETED', 'ERROR', 'CANCELLED'],
    events: BATCH_RUN_EVENTS,
    terminal: ['COMPLETED', 'ERROR', 'CANCELLED'],
    terminalConst: BATCH_RUN_TERMINAL,
    rows: [
      ['PENDING', 'launch', 'STARTING'],
      ['PENDING', 'late', 'DELAYED'],
      ['PENDING', 'cancel', 'CANCELLED'],
      ['DELAYED', 'launch', 'STARTING'],
      ['DELAYED', 'cancel', 'CANCELLED'],
      ['STARTING', 'started', 'RUNNING'],
      ['STARTING', 'launch_failed', 'ERROR'],
      ['STARTING', 'succeed', 'COMPLETED'],
      ['STARTING', 'fail', 'ERROR'],
      ['STARTING', 'cancel', 'CANCELLED'],
      ['STARTING', 'unsent', 'PENDING'],
      ['RUNNING', 'succeed', 'COMPLETED'],
      ['RUNNING', 'fail', 'ERROR'],
      ['RUNNING', 'cancel', 'CANCELLED'],
    ],
  },
  {
    name: 'realtime run',
    machine: realtimeRunMachine as unknown as Machine<string, string>,
    transition: realtimeRunTransition as unknown as Case['transition'],
    isTerminal: isRealtimeRunTerminal as (s: string) => boolean,
    table: REALTIME_RUN_TRANSITIONS,
    states: ['STARTING', 'RUNNING', 'EXITED', 'STOPPED', 'ERROR'],
    events: REALTIME_RUN_EVENTS,
    terminal: ['EXITED', 'STOPPED', 'ERROR'],
    terminalConst: REALTIME_RUN_TERMINAL,
    rows: [
      ['STARTING', 'started', 'RUNNING'],
      ['STARTING', 'exit', 'EXITED'],
      ['STARTING', 'stop', 'STOPPED'],
      ['STARTING', 'launch_failed', 'ERROR'],
      ['STARTING', 'give_up', 'ERROR'],
      ['STARTING', 'unsent', 'STARTING'],
      ['RUNNING', 'exit', 'EXITED'],
      ['RUNNING', 'stop', 'STOPPED'],
      ['RUNNING', 'give_up', 'ERROR'],
    ],
  },
  {
    name: 'trigger',
    machine: triggerMachine as unknown as Machine<string, string>,
    transition: triggerTransition as unknown as Case['transition'],
    isTerminal: isTriggerTerminal as (s: string) => boolean,
    table: TRIGGER_TRANSITIONS,
    states: ['scheduled', 'paused', 'fired', 'failed', 'cancelled'],
    events: TRIGGER_EVENTS,
    terminal: ['fired', 'failed', 'cancelled'],
    terminalConst: TRIGGER_TERMINAL,
    rows: [
      ['scheduled', 'pause', 'paused'],
      ['scheduled', 'fire', 'scheduled'],
      ['scheduled', 'succeed_once', 'fired'],
      ['scheduled', 'succeed_recurring', 'scheduled'],
      ['scheduled', 'fail_retry', 'scheduled'],
      ['scheduled', 'fail_exhausted', 'failed'],
      ['scheduled', 'fail_recurring', 'scheduled'],
      ['scheduled', 'cancel', 'cancelled'],
      ['paused', 'resume', 'scheduled'],
      ['paused', 'succeed_once', 'fired'],
      ['paused', 'succeed_recurring', 'paused'],
      ['paused', 'fail_retry', 'paused'],
      ['paused', 'fail_exhausted', 'failed'],
      ['paused', 'fail_recurring', 'paused'],
      ['paused', 'cancel', 'cancelled'],
    ],
  },
  {
    name: 'batch job',
    machine: batchJobMachine as unknown as Machine<string, string>,
    transition: batchJobTransition as unknown as Case['transition'],
    isTerminal: isBatchJobTerminal as (s: string) => boolean,
    table: BATCH_JOB_TRANSITIONS,
    states: ['WAITING', 'PENDING', 'FETCHED', 'RUNNING', 'COMPLETED', 'ERROR', 'CANCEL'],
    events: BATCH_JOB_EVENTS,
    terminal: ['COMPLETED', 'ERROR', 'CANCEL'],
    terminalConst: BATCH_JOB_TERMINAL,
    rows: [
      ['WAITING', 'ready', 'PENDING'],
      ['WAITING', 'dep_failed', 'CANCEL'],
      ['WAITING', 'cancel', 'CANCEL'],
      ['PENDING', 'claim', 'FETCHED'],
      ['PENDING', 'cancel', 'CANCEL'],
      ['FETCHED', 'start', 'RUNNING'],
      ['FETCHED', 'release', 'PENDING'],
      ['FETCHED', 'launch_failed', 'ERROR'],
      ['FETCHED', 'cancel', 'CANCEL'],
      ['RUNNING', 'succeed', 'COMPLETED'],
      ['RUNNING', 'fail', 'ERROR'],
      ['RUNNING', 'cancel', 'CANCEL'],
    ],
  },
];

describe.each(cases)('$name machine', (c) => {
  const allowed = new Map(c.rows.map(([from, ev, to]) => [`${from}/${ev}`, to]));

  it('declares exactly the expected states and terminal states', () => {
    expect([...c.machine.states]).toEqual(c.states);
    expect([...c.machine.terminal].sort()).toEqual([...c.terminal].sort());
    expect([...c.terminalConst].sort()).toEqual([...c.terminal].sort());
    expect(Object.keys(c.table).sort()).toEqual([...c.states].sort());
  });

  it('has exactly the expected rows in its exported table', () => {
    const actual: Row[] = [];
    for (const [from, row] of Object.entries(c.table)) {
      for (const [ev, to] of Object.entries(row as Record<string, string>)) actual.push([from, ev, to]);
    }
    const key = (r: Row) => r.join(' ');
    expect(actual.map(key).sort()).toEqual(c.rows.map(key).sort());
  });

  it.each(c.rows.map((r) => [...r]))('%s --%s--> %s', (from, ev, to) => {
    const r = c.transition(from, ev);
    expect(r).toEqual({ ok: true, state: to, changed: from !== to, absorbed: false });
    expect(c.machine.can(from, ev)).toBe(true);
    expect(c.machine.mustTransition(from, ev)).toEqual({ state: to, changed: from !== to, absorbed: false });
  });

  const nonTerminal = c.states.filter((s) => !c.terminal.includes(s));
  const rejected = nonTerminal.flatMap((s) => c.events.filter((e) => !allowed.has(`${s}/${e}`)).map((e) => [s, e]));

  it.each(rejected)('rejects %s --%s-- by value, and mustTransition throws CONFLICT', (from, ev) => {
    const r = c.transition(from!, ev!);
    expect(r.ok).toBe(false);
    expect(r.state).toBe(from);
    expect(r.changed).toBe(false);
    expect(r.absorbed).toBe(false);
    if (!r.ok) expect(r.message).toBe(`${c.name} cannot ${ev} from ${from}`);
    expect(c.machine.can(from!, ev!)).toBe(false);
    expect(() => c.machine.mustTransition(from!, ev!)).toThrow(expect.objectContaining({ name: 'TendError', code: 'CONFLICT' }));
  });

  const absorbing = c.terminal.flatMap((s) => c.events.map((e) => [s, e]));
  it.each(absorbing)('terminal %s absorbs %s', (from, ev) => {
    expect(c.transition(from!, ev!)).toEqual({ ok: true, state: from, changed: false, absorbed: true });
    expect(c.machine.mustTransition(from!, ev!)).toEqual({ state: from, changed: false, absorbed: true });
    expect(c.machine.can(from!, ev!)).toBe(false);
  });

  it('isTerminal is true exactly for the terminal states', () => {
    for (const s of c.states) expect([s, c.isTerminal(s)]).toEqual([s, c.terminal.includes(s)]);
  });

  it('eventsFrom and fromStates agree with the rows', () => {
    for (const s of c.states) {
      const expected = c.events.filter((e) => allowed.has(`${s}/${e}`));
      expect([s, c.machine.eventsFrom(s)]).toEqual([s, expected]);
    }
    for (const e of c.events) {
      const expected = nonTerminal.filter((s) => allowed.has(`${s}/${e}`));
      expect([e, c.machine.fromStates(e)]).toEqual([e, expected]);
    }
  });

  it('rejects unknown states and events by value instead of throwing', () => {
    const badState = c.transition('NOPE', c.events[0]!);
    expect(badState).toMatchObject({ ok: false, state: 'NOPE', changed: false, absorbed: false });
    if (!badState.ok) expect(badState.message).toBe(`unknown ${c.name} state NOPE`);
    const badEvent = c.transition(nonTerminal[0]!, 'toString');
    expect(badEvent).toMatchObject({ ok: false, state: nonTerminal[0], changed: false, absorbed: false });
    if (!badEvent.ok) expect(badEvent.message).toBe(`unknown ${c.name} event toString`);
  });
});

describe('a run whose start command was never handed over (unsent)', () => {
  it('puts a batch run back to wait: PENDING, DELAYED once late, launched again, still cancellable', () => {
    const back = batchRunTransition('STARTING', 'unsent');
    expect(back).toEqual({ ok: true, state: 'PENDING', changed: true, absorbed: false });
    expect(batchRunTransition(back.state, 'late').state).toBe('DELAYED');
    expect(batchRunTransition('DELAYED', 'launch').state).toBe('STARTING');
    expect(batchRunTransition('DELAYED', 'cancel').state).toBe('CANCELLED');
    expect(batchRunMachine.fromStates('unsent')).toEqual(['STARTING']);
  });

  it('never takes a run that may have started, nor reopens a finished one', () => {
    expect(batchRunTransition('RUNNING', 'unsent').ok).toBe(false);
    expect(batchRunTransition('CANCELLED', 'unsent')).toEqual({ ok: true, state: 'CANCELLED', changed: false, absorbed: true });
    expect(realtimeRunTransition('RUNNING', 'unsent').ok).toBe(false);
    expect(realtimeRunTransition('STOPPED', 'unsent').state).toBe('STOPPED');
  });

  it('keeps a realtime instance STARTING (it is sent again), still stoppable', () => {
    expect(realtimeRunTransition('STARTING', 'unsent')).toEqual({ ok: true, state: 'STARTING', changed: false, absorbed: false });
    expect(realtimeRunMachine.fromStates('unsent')).toEqual(['STARTING']);
    expect(realtimeRunTransition('STARTING', 'stop').state).toBe('STOPPED');
  });
});
