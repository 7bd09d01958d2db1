// The event catalogue is the one list: the append refuses what it does not describe, and those
// who decide what is trouble read it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import type { EngineEventType } from '../../../contract/calls.js';
import { CATALOGUE, EVENT_TYPES, eventProblems, recovers, troubleOf, type EventType } from '../../../main/engine/events/catalogue.js';
import { EventShapeError, type NewEvent } from '../../../main/engine/store/events.js';
import { Store } from '../../../main/engine/store/store.js';

describe('the catalogue', () => {
  it('names every type noun:verb, with a level', () => {
    for (const t of EVENT_TYPES) {
      expect(t).toMatch(/^[a-z]+:[a-z-]+$/);
      expect(['info', 'warn', 'error']).toContain(CATALOGUE[t].level);
    }
  });

  it('is what the contract pushes: its event types are the catalogue keys', () => {
    expectTypeOf<EngineEventType>().toEqualTypeOf<EventType>();
  });

  it('says which events are trouble, of which kind, and which end it', () => {
    const kinds = Object.fromEntries(EVENT_TYPES.filter((t) => troubleOf(t)).map((t) => [t, troubleOf(t)]));
    expect(kinds).toEqual({
      'routine:crash-loop': 'error',
      'routine:silent': 'error',
      'run:failed': 'error',
      'run:refused': 'error',
      'run:launch-failed': 'error',
      'run:delayed': 'delayed',
      'run:exited': 'restart',
    });
    expect(EVENT_TYPES.filter(recovers)).toEqual(['run:completed']);
    expect(troubleOf('no:such')).toBeNull();
  });

  it('refuses at compile time a type it does not know and data its type does not carry', () => {
    // @ts-expect-error: not in the catalogue
    const unknown: NewEvent = { type: 'test:ping', message: 'x' };
    // @ts-expect-error: exitCode is a number or null
    const badData: NewEvent = { type: 'run:failed', message: 'x', data: { exitCode: 'three', signal: null } };
    // @ts-expect-error: job:posted carries no data
    const extra: NewEvent = { type: 'job:posted', message: 'x', data: { any: 1 } };
    expect([unknown, badData, extra]).toHaveLength(3);
  });

  it('names what does not match, by type and field', () => {
    expect(eventProblems({ type: 'test:ping' })).toEqual(['type "test:ping" is not in the event catalogue (main/engine/events/catalogue.ts)']);
    expect(eventProblems({ type: 'run:failed', data: { exitCode: 'three', signal: null } })).toEqual([expect.stringMatching(/^run:failed data\.exitCode: /)]);
    expect(eventProblems({ type: 'run:failed', data: { exitCode: 3, signal: null, extra: true } })).toEqual([expect.stringMatching(/^run:failed data: .*extra/)]);
    expect(eventProblems({ type: 'job:posted', data: { any: 1 } })).toEqual(['job:posted carries no data, got {"any":1}']);
    expect(eventProblems({ type: 'run:failed', data: { exitCode: 3, signal: null } })).toEqual([]);
    // Data is optional: an external routine's own report of its end has no exit status.
    expect(eventProblems({ type: 'run:completed' })).toEqual([]);
  });
});

describe('the append', () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tend-catalogue-'));
    store = Store.open(join(dir, 'tend.db'));
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses an event the catalogue does not describe, writing nothing (a programming error, caught here)', () => {
    const before = store.events.lastId();
    const wrong = [
      { type: 'test:ping', message: 'x' },
      { type: 'run:failed', message: 'x', data: { exitCode: 'three', signal: null } },
      { type: 'job:posted', message: 'x', data: { any: 1 } },
    ] as unknown as NewEvent[];
    for (const e of wrong) expect(() => store.events.append(e, 1)).toThrow(EventShapeError);
    expect(() => store.events.append(wrong[1]!, 1)).toThrow('event refused: run:failed data.exitCode: ');
    expect(store.events.lastId()).toBe(before);
  });

  it('inside a transaction, the refusal rolls back what the transaction wrote', () => {
    const before = store.events.lastId();
    expect(() =>
      store.tx(() => {
        store.events.append({ type: 'job:posted', message: 'kept?' }, 1);
        store.events.append({ type: 'test:ping', message: 'x' } as unknown as NewEvent, 1);
      }),
    ).toThrow(EventShapeError);
    expect(store.events.lastId()).toBe(before);
  });

  it('writes the catalogue level unless the site says otherwise', () => {
    expect(store.events.append({ type: 'run:failed', message: 'x' }, 1).level).toBe('error');
    expect(store.events.append({ type: 'job:pending', message: 'x' }, 1).level).toBe('info');
    expect(store.events.append({ type: 'job:pending', level: 'warn', message: 'requeued' }, 1).level).toBe('warn');
  });
});
