import { describe, expect, it } from 'vitest';
import { batchRunMachine, defineMachine, isTerminalRunStatus } from '../../../main/engine/lifecycle/index.js';

describe('defineMachine', () => {
  it('refuses a terminal state with outgoing transitions', () => {
    expect(() =>
      defineMachine<'a' | 'b', 'go'>({ name: 'm', states: ['a', 'b'], events: ['go'], terminal: ['b'], table: { a: { go: 'b' }, b: { go: 'a' } } }),
    ).toThrow('m: terminal state b has transitions');
  });

  it('refuses a row that leads to an unknown state', () => {
    expect(() =>
      defineMachine<'a' | 'b', 'go'>({ name: 'm', states: ['a', 'b'], events: ['go'], terminal: ['b'], table: { a: { go: 'c' as 'b' }, b: {} } }),
    ).toThrow('m: a --go--> unknown state c');
  });

  it('refuses a state without a row', () => {
    expect(() =>
      defineMachine<'a' | 'b', 'go'>({ name: 'm', states: ['a', 'b'], events: ['go'], terminal: ['b'], table: { a: { go: 'b' } } as never }),
    ).toThrow('m: state b has no row in the table');
  });

  it('refuses a row naming an event the machine does not list', () => {
    expect(() =>
      defineMachine<'a' | 'b', 'go'>({ name: 'm', states: ['a', 'b'], events: ['go'], terminal: ['b'], table: { a: { stop: 'b' } as never, b: {} } }),
    ).toThrow('m: unknown event stop in row a');
  });

  it('refuses a terminal state that is not one of its states', () => {
    expect(() =>
      defineMachine<'a' | 'b', 'go'>({ name: 'm', states: ['a', 'b'], events: ['go'], terminal: ['z' as 'b'], table: { a: { go: 'b' }, b: {} } }),
    ).toThrow('m: unknown terminal state z');
  });

  it('refuses a row whose target is left undefined', () => {
    expect(() =>
      defineMachine<'a' | 'b', 'go'>({ name: 'm', states: ['a', 'b'], events: ['go'], terminal: ['b'], table: { a: { go: undefined }, b: {} } }),
    ).toThrow('m: a --go--> unknown state undefined');
  });

  it('accepts a terminal state with an empty row', () => {
    const m = defineMachine<'a' | 'b', 'go'>({ name: 'm', states: ['a', 'b'], events: ['go'], terminal: ['b'], table: { a: { go: 'b' }, b: {} } });
    expect(m.transition('a', 'go')).toEqual({ ok: true, state: 'b', changed: true, absorbed: false });
  });

  it('returns a frozen machine whose table is the one given', () => {
    expect(Object.isFrozen(batchRunMachine)).toBe(true);
    expect(batchRunMachine.table.PENDING.late).toBe('DELAYED');
  });
});

describe('isTerminalRunStatus', () => {
  it('knows the terminal statuses of both run kinds', () => {
    for (const s of ['COMPLETED', 'ERROR', 'CANCELLED', 'EXITED', 'STOPPED'] as const) expect([s, isTerminalRunStatus(s)]).toEqual([s, true]);
    for (const s of ['PENDING', 'DELAYED', 'STARTING', 'RUNNING'] as const) expect([s, isTerminalRunStatus(s)]).toEqual([s, false]);
  });

  it('checks against one kind when given', () => {
    expect(isTerminalRunStatus('EXITED', 'batch')).toBe(false);
    expect(isTerminalRunStatus('EXITED', 'realtime')).toBe(true);
    expect(isTerminalRunStatus('CANCELLED', 'realtime')).toBe(false);
    expect(isTerminalRunStatus('CANCELLED', 'batch')).toBe(true);
    expect(isTerminalRunStatus('ERROR', 'realtime')).toBe(true);
  });
});
