// Trigger moves (scheduler/moves.ts `moveTrigger`) on a real SQLite store: every (state, event)
// lands where the trigger table says, in SQL; a terminal trigger absorbs every event unchanged;
// a move made from a state read before someone else moved the row changes nothing.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TriggerRow, TriggerState } from '../../../main/engine/domain/types.js';
import { TRIGGER_EVENTS, TRIGGER_STATES, TRIGGER_TERMINAL, TRIGGER_TRANSITIONS, type TriggerEvent } from '../../../main/engine/lifecycle/index.js';
import { moveTrigger } from '../../../main/engine/scheduler/moves.js';
import { saveRoutine } from '../../../main/engine/ops/routines.js';
import { Store } from '../../../main/engine/store/store.js';

let store: Store;
const ID = 'me@host:r';
beforeEach(() => {
  store = Store.open(':memory:');
  // A trigger belongs to a routine (a foreign key): define one, then set its trigger as each test needs.
  saveRoutine(store, { id: ID, command: 'true', cron: '0 * * * *', tz: 'UTC' }, { now: 500, localComputer: 'me@host' });
});
afterEach(() => store.close());

/** How an armed trigger ends in each terminal state: a definition arms only live ones. */
const ENDS: Partial<Record<TriggerState, TriggerEvent>> = { fired: 'succeed_once', failed: 'fail_exhausted', cancelled: 'cancel' };
/** The trigger in `state`, last written at 1000. */
const arm = (state: TriggerState): TriggerRow => {
  const live = state === 'paused' ? 'paused' : 'scheduled';
  const t = { routineId: ID, state: live, nextRunAt: 5000, firstDueAt: null, lastFiredAt: null, attempts: 2, lastError: null, lastErrorAt: null, failCount: 0 } as const;
  store.routines.saveTrigger(t, 1000);
  const end = ENDS[state];
  if (end) expect(moveTrigger(store, t, end, {}, 1000)).toBe(state);
  return store.routines.trigger(ID)!;
};
const writtenAt = (): number => store.db.prepare('SELECT updated_at FROM triggers WHERE routine_id = ?').pluck().get(ID) as number;

describe('moveTrigger follows the trigger table', () => {
  const live = TRIGGER_STATES.filter((s) => !(TRIGGER_TERMINAL as readonly string[]).includes(s));
  for (const state of live) {
    for (const event of TRIGGER_EVENTS) {
      const to = TRIGGER_TRANSITIONS[state][event];
      it(`${state} --${event}--> ${to ?? 'refused'}`, () => {
        const read = arm(state);
        expect(moveTrigger(store, read, event, { attempts: 0 }, 2000)).toBe(to ?? null);
        expect(store.routines.trigger(ID)).toMatchObject({ state: to ?? state, attempts: to ? 0 : 2 });
        expect(writtenAt()).toBe(to ? 2000 : 1000);
      });
    }
  }
});

describe('moveTrigger changes nothing', () => {
  for (const state of TRIGGER_TERMINAL) {
    it(`from ${state}, a terminal state, whatever the event`, () => {
      const read = arm(state);
      for (const event of TRIGGER_EVENTS) expect(moveTrigger(store, read, event, { nextRunAt: 9000, attempts: 0 }, 2000), event).toBeNull();
      expect(store.routines.trigger(ID)).toEqual(read);
      expect(writtenAt()).toBe(1000);
    });
  }

  it('when the trigger was paused after it was read as scheduled', () => {
    const read = arm('scheduled');
    expect(moveTrigger(store, read, 'pause', {}, 1500)).toBe('paused');
    const paused = store.routines.trigger(ID);
    expect(moveTrigger(store, read, 'fire', { nextRunAt: 9000, lastFiredAt: 2000 }, 2000)).toBeNull();
    expect(store.routines.trigger(ID)).toEqual(paused);
    expect(writtenAt()).toBe(1500);
  });

  it('when the trigger ended after it was read (a stale read of a live state)', () => {
    const read = arm('scheduled');
    expect(moveTrigger(store, read, 'succeed_once', { attempts: 0 }, 1500)).toBe('fired');
    expect(moveTrigger(store, read, 'fail_exhausted', { lastError: 'exit 1', failCount: 1 }, 2000)).toBeNull();
    expect(store.routines.trigger(ID)).toMatchObject({ state: 'fired', lastError: null, failCount: 0, attempts: 0 });
  });

  it('when the routine has no trigger row', () => {
    expect(moveTrigger(store, { routineId: 'me@host:nope', state: 'scheduled' }, 'pause')).toBeNull();
    expect(store.routines.trigger('me@host:nope')).toBeNull();
  });
});
